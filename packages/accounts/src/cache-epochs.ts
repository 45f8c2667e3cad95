import type { SqlExecutor } from '@hallmark/sql';

/** The tables whose in-memory caches the epochs guard (migration 0004_cache_epochs.sql). */
export type CachedTable = 'api_keys' | 'verification_keys' | 'gtin_claims';

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

/**
 * Polls `cache_epochs` every `pollMs` (default 500 ms, so a change is seen within a second with
 * the query's time). A failed poll keeps the last epochs and says so through `onError`; the next
 * poll tries again. The first read happens before this resolves.
 */
export async function watchCacheEpochs(
  db: SqlExecutor,
  options: { pollMs?: number; onError?: (error: unknown) => void } = {},
): Promise<CacheEpochs> {
  const epochs: Record<CachedTable, number> = { api_keys: 0, verification_keys: 0, gtin_claims: 0 };
  let reading: Promise<void> | undefined;
  const read = async () => {
    const rows = await db.query<{ name: CachedTable; value: string }>('SELECT name, value FROM cache_epochs');
    for (const row of rows) {
      const value = Number(row.value);
      if (value > epochs[row.name]) epochs[row.name] = value;
    }
  };
  const refresh = () => {
    reading ??= read().finally(() => {
      reading = undefined;
    });
    return reading;
  };
  await refresh();
  const timer = setInterval(() => {
    refresh().catch((error: unknown) => options.onError?.(error));
  }, options.pollMs ?? defaultEpochPollMs);
  timer.unref();
  return {
    current: (table) => epochs[table],
    refresh,
    async stop() {
      clearInterval(timer);
      await reading?.catch(() => {});
    },
  };
}
