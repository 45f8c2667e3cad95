import type { Environment } from '@hallmark/contracts';
import type { SqlExecutor } from '@hallmark/sql';
import { type CacheEpochs, fixedCacheEpochs } from './cache-epochs.ts';
import { createGtinCache } from './gtin-cache.ts';
import type { GtinChanges } from './gtin-changes.ts';
import { findGtinSigner } from './gtin-claim-store.ts';

export interface GtinSigner {
  accountId: string;
  /** True when the account owns the GTIN; false when it signs as the operator for a GTIN nobody owns. */
  owned: boolean;
}

/**
 * Who signs a GTIN's codes (its owner, or the operator for a GTIN nobody owns; docs/SIGNING.md),
 * remembered briefly per GTIN: a batch of 10,000 codes of a few GTINs asks the database a few
 * times, not 10,000, and verification needs no other service for it. The `gtins.ownership-changed`
 * broadcast drops the GTINs it names (`changes`), and an entry loaded before the `gtin_claims` epoch
 * moved (or `gtin_claims_added`, for a GTIN nobody owned) is taken as gone on use, so a grant or a
 * revocation counts on every replica within a second even when the broadcast is lost. Used by code-service (who may sign) and verify-service (whose codes count).
 */
export function createGtinSigners(
  db: SqlExecutor,
  options: { cacheMs?: number; epochs?: CacheEpochs; changes?: GtinChanges } = {},
) {
  const cache = createGtinCache<GtinSigner | undefined>({
    epochs: options.epochs ?? fixedCacheEpochs,
    tables: ['gtin_claims'],
    cacheMs: options.cacheMs ?? 5_000,
    ...(options.changes ? { changes: options.changes } : {}),
    unowned: (signer) => signer?.owned !== true,
  });
  return {
    signerOf: (environment: Environment, gtin: string): Promise<GtinSigner | undefined> =>
      cache.get(environment, gtin, () => findGtinSigner(db, environment, gtin)),
  };
}
export type GtinSigners = ReturnType<typeof createGtinSigners>;
