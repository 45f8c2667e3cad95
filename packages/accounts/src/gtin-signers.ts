import type { Environment } from '@hallmark/contracts';
import type { SqlExecutor } from '@hallmark/sql';
import { type CacheEpochs, fixedCacheEpochs } from './cache-epochs.ts';
import { findGtinSigner } from './gtin-claim-store.ts';
import { createSingleFlight } from './single-flight.ts';

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
  const cacheMs = options.cacheMs ?? 5_000;
  const epochs = options.epochs ?? fixedCacheEpochs;
  const cache = new Map<string, { signer: GtinSigner | undefined; until: number; epoch: number }>();
  // Requests that find the entry expired together share one query (per epoch: a grant starts another).
  const loads = createSingleFlight<GtinSigner | undefined>();
  return {
    async signerOf(environment: Environment, gtin: string): Promise<GtinSigner | undefined> {
      const key = `${environment}:${gtin}`;
      const cached = cache.get(key);
      const epoch = epochs.current('gtin_claims');
      if (cached && cached.until > Date.now() && cached.epoch >= epoch) return cached.signer;
      return loads.run(
        `${key}@${epoch}`,
        () => findGtinSigner(db, environment, gtin),
        (signer) => {
          if (cache.size > 50_000) cache.clear();
          cache.set(key, { signer, until: Date.now() + cacheMs, epoch });
        },
      );
    },
    forgetAll(): void {
      cache.clear();
      loads.forget();
    },
  };
}
export type GtinSigners = ReturnType<typeof createGtinSigners>;
