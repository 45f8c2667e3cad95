import type { Environment } from '@hallmark/contracts';
import type { SqlExecutor } from '@hallmark/sql';
import { type CacheEpochs, fixedCacheEpochs } from './cache-epochs.ts';
import { createEpochCache } from './epoch-cache.ts';
import { findGtinSigner } from './gtin-claim-store.ts';

export interface GtinSigner {
  accountId: string;
  /** True when the account owns the GTIN; false when it signs as the operator for a GTIN nobody owns. */
  owned: boolean;
}

/**
 * Who signs a GTIN's codes (its owner, or the operator for a GTIN nobody owns; docs/SIGNING.md),
 * remembered briefly per GTIN: a batch of 10,000 codes of a few GTINs asks the database a few
 * times, not 10,000, and verification needs no other service for it. `forgetAll` runs on the
 * `gtins.ownership-changed` broadcast, and an entry loaded before the `gtin_claims` epoch moved is
 * taken as gone on use, so a grant or a revocation counts on every replica within a second even
 * when the broadcast is lost. Used by code-service (who may sign) and verify-service (whose codes count).
 */
export function createGtinSigners(db: SqlExecutor, options: { cacheMs?: number; epochs?: CacheEpochs } = {}) {
  const cache = createEpochCache<GtinSigner | undefined>({
    epochs: options.epochs ?? fixedCacheEpochs,
    tables: ['gtin_claims'],
    cacheMs: options.cacheMs ?? 5_000,
  });
  return {
    signerOf: (environment: Environment, gtin: string): Promise<GtinSigner | undefined> =>
      cache.get(`${environment}:${gtin}`, () => findGtinSigner(db, environment, gtin)),
    forgetAll: () => cache.forgetAll(),
  };
}
export type GtinSigners = ReturnType<typeof createGtinSigners>;
