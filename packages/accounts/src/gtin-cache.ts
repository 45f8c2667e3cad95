import type { Environment } from '@hallmark/contracts';
import type { CachedTable, CacheEpochs } from './cache-epochs.ts';
import type { GtinChanges } from './gtin-changes.ts';
import { createSingleFlight } from './single-flight.ts';

export interface GtinCacheOptions<V> {
  epochs: CacheEpochs;
  /** Tables whose epoch moving drops every entry (`gtin_claims` moves when a claim ends or changes). */
  tables: readonly CachedTable[];
  cacheMs: number;
  /** Changes heard by broadcast, per GTIN: one drops only the entries of the GTINs it covers. */
  changes?: GtinChanges;
  /**
   * True for a value a claim made since could change: nobody owns the GTIN yet. Such an entry is also
   * gone once `gtin_claims_added` moves (a claim was made anywhere); an owner's is not, since a new
   * claim never takes an owned GTIN without ending the owner's claim (gtin-claim-store.ts).
   */
  unowned: (value: V) => boolean;
}

/**
 * Per-GTIN values loaded and kept `cacheMs`, each stamped with the epochs its load began under and
 * taken as gone, on use, once one of them has moved (cache-epochs.ts), or once a change covering its
 * GTIN was heard (gtin-changes.ts). Callers who find a GTIN expired together share one load (per
 * stamp: a change starts another). `forgetAll` is for a broadcast that does not say what changed:
 * later callers load afresh, and loads running store nothing.
 */
export function createGtinCache<V>(options: GtinCacheOptions<V>) {
  const cache = new Map<string, { value: V; until: number; stamp: string; added: number; heard: number }>();
  const loads = createSingleFlight<V>();
  return {
    get(environment: Environment, gtin: string, load: () => Promise<V>): Promise<V> {
      // Epochs only grow, so a stamp other than the current one is older.
      const stamp = options.tables.map((table) => options.epochs.current(table)).join(':');
      const added = options.epochs.current('gtin_claims_added');
      const heard = options.changes?.stamp() ?? 0;
      const key = `${environment}:${gtin}`;
      const cached = cache.get(key);
      if (
        cached &&
        cached.until > Date.now() &&
        cached.stamp === stamp &&
        (cached.added === added || !options.unowned(cached.value)) &&
        (options.changes?.isCurrent(gtin, cached.heard) ?? true)
      ) {
        return Promise.resolve(cached.value);
      }
      return loads.run(`${key}@${stamp}:${added}:${heard}`, load, (value) => {
        if (cache.size > 50_000) cache.clear();
        cache.set(key, { value, until: Date.now() + options.cacheMs, stamp, added, heard });
      });
    },
    forgetAll(): void {
      cache.clear();
      loads.forget();
    },
  };
}
