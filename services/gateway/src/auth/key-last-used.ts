import { writeKeysLastUsed } from '@hallmark/accounts';
import type { Logger } from '@hallmark/runtime';
import type { SqlExecutor } from '@hallmark/sql';

/**
 * lastUsedAt of API keys without a write per request: a request notes its key in a set (no I/O),
 * and every `flushEveryMs` the keys noted since the last write are written in one statement with
 * the time of that write (api_key_last_used; the later time wins across replicas). So lastUsedAt is
 * at most `flushEveryMs` (plus one write) behind the key's last use, and a replica that crashes
 * loses at most that much. A write that fails is tried again with the next.
 */
export interface KeyLastUsed {
  /** A request authenticated with this key (by x-api-key or a console session). */
  note(keyId: string): void;
  /** Writes what was noted; at most one write at a time. */
  flush(): Promise<void>;
  /** Stops the timer and writes what is left. */
  stop(): Promise<void>;
}

export function createKeyLastUsed(options: {
  db: SqlExecutor;
  clock: () => Date;
  log: Logger;
  flushEveryMs?: number;
}): KeyLastUsed {
  let noted = new Set<string>();
  let writing: Promise<void> | undefined;

  const write = async (): Promise<void> => {
    if (noted.size === 0) return;
    const keyIds = [...noted];
    noted = new Set();
    try {
      await writeKeysLastUsed(options.db, keyIds, options.clock());
    } catch (error) {
      for (const keyId of keyIds) noted.add(keyId);
      options.log.warn({ err: error, keys: keyIds.length }, 'last use of keys not written; the next write tries again');
    }
  };
  const flush = (): Promise<void> => {
    if (!writing) writing = write().finally(() => (writing = undefined));
    return writing;
  };
  const timer = setInterval(() => void flush(), options.flushEveryMs ?? 2_000);
  timer.unref();

  return {
    note(keyId) {
      noted.add(keyId);
    },
    flush,
    async stop() {
      clearInterval(timer);
      await writing;
      await flush();
    },
  };
}
