import { type CacheEpochs, findGtinSigner, fixedCacheEpochs } from '@hallmark/accounts';
import type { Environment } from '@hallmark/contracts';
import type { SqlExecutor } from '@hallmark/sql';

/**
 * Who signs a GTIN's codes (its owner, or the operator for a GTIN nobody owns; docs/SIGNING.md),
 * read from the accounts tables (`gtin_claims`, `accounts`) that every service migrates, so
 * verification needs no other service for it. Kept 5 s per GTIN; `forgetAll` runs on the
 * `gtins.ownership-changed` broadcast, so a grant or a revocation counts at once, and the 5 s
 * bound a lost broadcast. The same rule as code-service's `gtin-signers.ts`.
 */
export function createGtinSigners(db: SqlExecutor, options: { cacheMs?: number; epochs?: CacheEpochs } = {}) {
  const cacheMs = options.cacheMs ?? 5_000;
  const epochs = options.epochs ?? fixedCacheEpochs;
  const cache = new Map<string, { accountId: string | null; until: number; epoch: number }>();
  return {
    /** The signer's account id, or null when there is neither an owner nor an operator. */
    async signerOf(environment: Environment, gtin: string): Promise<string | null> {
      const key = `${environment}:${gtin}`;
      const cached = cache.get(key);
      const epoch = epochs.current('gtin_claims');
      if (cached && cached.until > Date.now() && cached.epoch >= epoch) return cached.accountId;
      const signer = await findGtinSigner(db, environment, gtin);
      if (cache.size > 50_000) cache.clear();
      cache.set(key, { accountId: signer?.accountId ?? null, until: Date.now() + cacheMs, epoch });
      return signer?.accountId ?? null;
    },
    forgetAll(): void {
      cache.clear();
    },
  };
}
export type GtinSigners = ReturnType<typeof createGtinSigners>;
