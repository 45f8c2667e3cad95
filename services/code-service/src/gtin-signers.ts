import { type CacheEpochs, findGtinSigner, fixedCacheEpochs } from '@hallmark/accounts';
import type { Environment } from '@hallmark/contracts';
import type { SqlExecutor } from '@hallmark/sql';

export interface GtinSigner {
  accountId: string;
  /** True when the account owns the GTIN; false when it signs as the operator for a GTIN nobody owns. */
  owned: boolean;
}

/**
 * Who may sign codes of a GTIN, remembered briefly per GTIN: a batch of 10,000 codes of a few GTINs
 * asks the database a few times, not 10,000. `forgetAll` runs when ownership changes anywhere
 * (broadcast), so a grant or a revocation takes effect on every replica within a bus round trip.
 */
export function createGtinSigners(db: SqlExecutor, options: { cacheMs?: number; epochs?: CacheEpochs } = {}) {
  const cacheMs = options.cacheMs ?? 5_000;
  const epochs = options.epochs ?? fixedCacheEpochs;
  const cache = new Map<string, { signer: GtinSigner | undefined; until: number; epoch: number }>();
  return {
    async signerOf(environment: Environment, gtin: string): Promise<GtinSigner | undefined> {
      const key = `${environment}:${gtin}`;
      const cached = cache.get(key);
      const epoch = epochs.current('gtin_claims');
      if (cached && cached.until > Date.now() && cached.epoch >= epoch) return cached.signer;
      const signer = await findGtinSigner(db, environment, gtin);
      if (cache.size > 50_000) cache.clear();
      cache.set(key, { signer, until: Date.now() + cacheMs, epoch });
      return signer;
    },
    forgetAll(): void {
      cache.clear();
    },
  };
}
export type GtinSigners = ReturnType<typeof createGtinSigners>;
