import type { CachedTable, CacheEpochs } from './cache-epochs.ts';
import { createSingleFlight } from './single-flight.ts';

/**
 * Values loaded per key and kept `cacheMs`, each stamped with the epochs of `tables` its load began
 * under and taken as gone, on use, once any of them has moved (cache-epochs.ts). Callers who find a
 * key expired together share one load (per epochs: a change starts another). `forgetAll` is for the
 * broadcast that says the tables changed: later callers load afresh, and loads running store nothing.
 */
export function createEpochCache<V>(options: { epochs: CacheEpochs; tables: readonly CachedTable[]; cacheMs: number }) {
  const cache = new Map<string, { value: V; until: number; stamp: string }>();
  const loads = createSingleFlight<V>();
  return {
    get(key: string, load: () => Promise<V>): Promise<V> {
      // Epochs only grow, so a stamp other than the current one is older.
      const stamp = options.tables.map((table) => options.epochs.current(table)).join(':');
      const cached = cache.get(key);
      if (cached && cached.until > Date.now() && cached.stamp === stamp) return Promise.resolve(cached.value);
      return loads.run(`${key}@${stamp}`, load, (value) => {
        if (cache.size > 50_000) cache.clear();
        cache.set(key, { value, until: Date.now() + options.cacheMs, stamp });
      });
    },
    forgetAll(): void {
      cache.clear();
      loads.forget();
    },
  };
}
