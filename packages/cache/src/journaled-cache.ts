import { fileURLToPath } from 'node:url';
import { loadMigrations, runMigrations, type SqlDatabase } from '@hallmark/sql';
import type { Cache } from './cache.ts';
import { type CacheStateKind, type CacheStateRecord, createMemoryCache } from './memory-cache.ts';

const migrationsFolder = fileURLToPath(new URL('../migrations', import.meta.url));

export interface JournaledCacheOptions {
  /** Where the state is kept: the embedded form's PGlite (any SqlDatabase works). */
  db: SqlDatabase;
  /** The cache's clock, in Unix ms; expiries are by it. */
  now?: () => number;
  /** How often changed keys are written, in one statement. What a crash can lose. Default 100 ms. */
  flushIntervalMs?: number;
  /**
   * A state that expires sooner than this after a flush is not kept (its row is deleted instead):
   * per-second counters and 10-second reload keys would be gone before a restart completes.
   * Default 2000 ms.
   */
  minimumLifetimeMs?: number;
  /** Told of a failed write; the keys are written again at the next flush. */
  onError?: (error: unknown) => void;
}

export interface JournaledCache extends Cache {
  /** Writes every change made so far; resolves once it is committed. */
  flush(): Promise<void>;
}

const kinds: readonly CacheStateKind[] = ['entry', 'quota', 'scan'];

/**
 * The memory cache, written behind to SQL so its state outlives a restart (the embedded form;
 * docs/ARCHITECTURE.md, Embedded durability). Calls are answered from memory exactly as by
 * `createMemoryCache` (consumeQuotas still without a promise); the keys they change are noted and,
 * every `flushIntervalMs`, their current state is upserted (or their row deleted) in one
 * statement, one flush at a time. At start the unexpired rows are read back. A crash loses at most
 * the changes of the last interval (and of a flush not yet committed); `close` writes the rest.
 * Rejects when the table cannot be made or read.
 */
export async function createJournaledCache(options: JournaledCacheOptions): Promise<JournaledCache> {
  const { db } = options;
  const now = options.now ?? Date.now;
  const flushIntervalMs = options.flushIntervalMs ?? 100;
  const minimumLifetimeMs = options.minimumLifetimeMs ?? 2_000;
  await runMigrations(db, await loadMigrations('cache', migrationsFolder));

  const dirty: Record<CacheStateKind, Set<string>> = { entry: new Set(), quota: new Set(), scan: new Set() };
  // When the oldest change not yet taken by a write, and the oldest of the write under way, were
  // made (the machine's monotonic time, whatever the cache's clock says).
  let unsavedSince: number | undefined;
  let writingSince: number | undefined;
  const memory = createMemoryCache({
    now,
    onChange: (kind, key) => {
      dirty[kind].add(key);
      unsavedSince ??= performance.now();
    },
  });

  await db.query('DELETE FROM cache_state WHERE expires_at_ms <= $1', [now()]);
  const rows = await db.query<{ kind: CacheStateKind; key: string; state: unknown; expires_at_ms: string | number | null }>(
    'SELECT kind, key, state, expires_at_ms FROM cache_state',
  );
  for (const row of rows) {
    memory.importState({
      kind: row.kind,
      key: row.key,
      state: row.state,
      expiresAtMs: row.expires_at_ms === null ? null : Number(row.expires_at_ms),
    });
  }

  let lastSweepMs = now();

  const writeChanges = async (): Promise<void> => {
    const nowMs = now();
    writingSince = unsavedSince;
    unsavedSince = undefined;
    const changes: (CacheStateRecord | { kind: CacheStateKind; key: string; removed: true })[] = [];
    const taken: [CacheStateKind, string[]][] = [];
    for (const kind of kinds) {
      if (dirty[kind].size === 0) continue;
      const keys = [...dirty[kind]];
      dirty[kind].clear();
      taken.push([kind, keys]);
      for (const key of keys) {
        const record = memory.exportState(kind, key);
        // Gone, or gone before a restart could need it: no row (a longer-lived older one is deleted).
        if (!record || (record.expiresAtMs !== null && record.expiresAtMs - nowMs < minimumLifetimeMs)) {
          changes.push({ kind, key, removed: true });
        } else changes.push(record);
      }
    }
    const sweep = nowMs - lastSweepMs >= 60_000;
    if (changes.length === 0 && !sweep) {
      writingSince = undefined;
      return;
    }
    try {
      if (changes.length > 0) {
        await db.query(
          `WITH input AS (
             SELECT * FROM jsonb_to_recordset($1::jsonb)
               AS x(kind text, key text, state jsonb, "expiresAtMs" bigint, removed boolean)
           ), removed AS (
             DELETE FROM cache_state c USING input i
              WHERE i.removed IS TRUE AND c.kind = i.kind AND c.key = i.key
           )
           INSERT INTO cache_state (kind, key, state, expires_at_ms)
           SELECT kind, key, state, "expiresAtMs" FROM input WHERE removed IS NOT TRUE
           ON CONFLICT (kind, key) DO UPDATE SET state = EXCLUDED.state, expires_at_ms = EXCLUDED.expires_at_ms`,
          [JSON.stringify(changes)],
        );
      }
      if (sweep) {
        lastSweepMs = nowMs;
        await db.query('DELETE FROM cache_state WHERE expires_at_ms <= $1', [nowMs]);
      }
    } catch (error) {
      // Written again next time, with the state they have then.
      for (const [kind, keys] of taken) for (const key of keys) dirty[kind].add(key);
      if (writingSince !== undefined) unsavedSince = Math.min(unsavedSince ?? writingSince, writingSince);
      options.onError?.(error);
    } finally {
      writingSince = undefined;
    }
  };

  // One write at a time, in order: a key changed during a write is written by the next one, which
  // every ask made meanwhile joins (a hundred callers waiting for their changes' write make one
  // more write, not a hundred).
  let running: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  const flush = (): Promise<void> => {
    if (queued) return queued;
    const start = (): Promise<void> => {
      queued = undefined;
      const write = writeChanges().finally(() => {
        if (running === write) running = undefined;
      });
      running = write;
      return write;
    };
    if (!running) return start();
    queued = running.then(start, start);
    return queued;
  };

  const timer = setInterval(() => {
    if (!running) void flush();
  }, flushIntervalMs);
  timer.unref();

  return {
    ...memory,
    flush,
    persist: flush,
    unsavedForMs() {
      const oldest = writingSince ?? unsavedSince;
      return oldest === undefined ? 0 : performance.now() - oldest;
    },
    async close() {
      clearInterval(timer);
      await flush();
      await memory.close();
    },
  };
}
