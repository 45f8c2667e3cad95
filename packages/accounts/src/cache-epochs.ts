import type { SqlExecutor } from '@hallmark/sql';

/**
 * The tables whose in-memory caches the epochs guard (migrations 0004_cache_epochs.sql, 0010, 0014 to
 * 0017): `gtin_claims` moves when a claim ends or changes, `gtin_claims_added` when one is made,
 * `code_blocks` when a report of a code is decided, `code_blocklist` when a blocklist entry is added
 * or removed (verify-service's blocks), `compliance_configs` when an account's config changes.
 */
export type CachedTable =
  | 'api_keys'
  | 'verification_keys'
  | 'gtin_claims'
  | 'gtin_claims_added'
  | 'account_branding'
  | 'code_blocks'
  | 'code_blocklist'
  | 'compliance_configs';

/**
 * The replica's view of the cache epochs. A cache stamps each entry with `current(table)` as it
 * begins loading it, and on use takes an entry whose stamp is older than `current(table)` as
 * gone: so a change anywhere (any replica, the CLI, an operator's SQL) reaches this replica's
 * caches within one poll, even when its broadcast was lost, and a load that raced the change is
 * never served after the poll that saw it.
 */
export interface CacheEpochs {
  current(table: CachedTable): number;
  /** Reads the epochs now (e.g. on a key broadcast, so the stamp moves with the fast path too). */
  refresh(): Promise<void>;
  /** Stops polling, after the read under way (so the database can be closed next). */
  stop(): Promise<void>;
}

/** Every entry is current: for tests and tools that run no poll. */
export const fixedCacheEpochs: CacheEpochs = { current: () => 0, refresh: async () => {}, stop: async () => {} };

export const defaultEpochPollMs = 500;

/** One poll per database and interval, shared by every service of the process that watches it. */
interface SharedPoll {
  epochs: Record<CachedTable, number>;
  refresh(): Promise<void>;
  /** The onError of each watcher still watching (a failed poll is told to each). */
  watchers: Set<{ onError?: ((error: unknown) => void) | undefined }>;
  timer: NodeJS.Timeout;
  reading(): Promise<void> | undefined;
}
const sharedPolls = new WeakMap<SqlExecutor, Map<number, SharedPoll>>();

function startPoll(db: SqlExecutor, pollMs: number, polls: Map<number, SharedPoll>): SharedPoll {
  const epochs: Record<CachedTable, number> = {
    api_keys: 0,
    verification_keys: 0,
    gtin_claims: 0,
    gtin_claims_added: 0,
    account_branding: 0,
    code_blocks: 0,
    code_blocklist: 0,
    compliance_configs: 0,
  };
  let reading: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  const read = async () => {
    const rows = await db.query<{ name: CachedTable; value: string }>('SELECT name, value FROM cache_epochs');
    for (const row of rows) {
      const value = Number(row.value);
      if (value > epochs[row.name]) epochs[row.name] = value;
    }
  };
  const readNow = () => {
    reading = read().finally(() => {
      reading = undefined;
    });
    return reading;
  };
  /** A read in flight: the timer's tick joins it, whatever it began after. */
  const joinRead = () => reading ?? readNow();
  /**
   * A read begun after this call. One in flight may have begun before the caller's change (the
   * timer's), so it is waited out and one more read made, shared by every caller meanwhile.
   */
  const refresh = () => {
    if (!reading) return readNow();
    queued ??= reading
      .catch(() => {})
      .then(() => {
        queued = undefined;
        return joinRead();
      });
    return queued;
  };
  const poll: SharedPoll = {
    epochs,
    refresh,
    watchers: new Set(),
    timer: setInterval(() => {
      joinRead().catch((error: unknown) => {
        for (const watcher of poll.watchers) watcher.onError?.(error);
      });
    }, pollMs),
    reading: () => queued ?? reading,
  };
  poll.timer.unref();
  polls.set(pollMs, poll);
  return poll;
}

/**
 * Polls `cache_epochs` every `pollMs` (default 500 ms, so a change is seen within a second with
 * the query's time). A failed poll keeps the last epochs and says so through `onError`; the next
 * poll tries again. The first read happens before this resolves (for every watcher: a later one
 * reads again). Watchers of the same database object and interval in one process (the embedded
 * form's five services on its one PGlite) share one poll: the epochs are the database's, so each
 * sees the same numbers, and PGlite runs one statement where it ran five (issue #19). The poll
 * stops when its last watcher stops.
 */
export async function watchCacheEpochs(
  db: SqlExecutor,
  options: { pollMs?: number; onError?: (error: unknown) => void } = {},
): Promise<CacheEpochs> {
  const pollMs = options.pollMs ?? defaultEpochPollMs;
  let polls = sharedPolls.get(db);
  if (!polls) {
    polls = new Map();
    sharedPolls.set(db, polls);
  }
  const poll = polls.get(pollMs) ?? startPoll(db, pollMs, polls);
  const watcher = { onError: options.onError };
  poll.watchers.add(watcher);
  try {
    await poll.refresh();
  } catch (error) {
    forget(watcher);
    throw error;
  }
  let stopped = false;
  function forget(leaving: typeof watcher) {
    poll.watchers.delete(leaving);
    if (poll.watchers.size > 0) return;
    clearInterval(poll.timer);
    if (polls?.get(pollMs) === poll) polls.delete(pollMs);
  }
  return {
    current: (table) => poll.epochs[table],
    refresh: poll.refresh,
    async stop() {
      if (!stopped) {
        stopped = true;
        forget(watcher);
      }
      await poll.reading()?.catch(() => {});
    },
  };
}
