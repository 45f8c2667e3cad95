import type { Environment, ResolvedIssuer } from '@hallmark/contracts';
import type { SqlExecutor } from '@hallmark/sql';
import { findGtinIssuer } from './branding.ts';
import { type CacheEpochs, fixedCacheEpochs } from './cache-epochs.ts';
import { createSingleFlight } from './single-flight.ts';

/**
 * Who the public resolver page names as a GTIN's issuer (findGtinIssuer: the owner's name, colours
 * and logo), remembered briefly per GTIN, as GtinSigners remembers its signer: every scan of a page
 * asked the database for it, which in the embedded form was a statement on PGlite's one thread per
 * scan. `forgetAll` runs on the `gtins.ownership-changed` and `accounts.branding-changed`
 * broadcasts, and an entry loaded before the `gtin_claims` or `account_branding` epoch moved is taken
 * as gone on use, so a new owner or a new logo shows on every replica within a second even when the
 * broadcast is lost.
 */
export function createGtinIssuers(db: SqlExecutor, options: { cacheMs?: number; epochs?: CacheEpochs } = {}) {
  const cacheMs = options.cacheMs ?? 5_000;
  const epochs = options.epochs ?? fixedCacheEpochs;
  const cache = new Map<
    string,
    { issuer: ResolvedIssuer | undefined; until: number; claimsEpoch: number; brandingEpoch: number }
  >();
  // Scans that find the entry expired together share one query (per pair of epochs).
  const loads = createSingleFlight<ResolvedIssuer | undefined>();
  return {
    async issuerOf(environment: Environment, gtin: string): Promise<ResolvedIssuer | undefined> {
      const key = `${environment}:${gtin}`;
      const cached = cache.get(key);
      const claimsEpoch = epochs.current('gtin_claims');
      const brandingEpoch = epochs.current('account_branding');
      if (cached && cached.until > Date.now() && cached.claimsEpoch >= claimsEpoch && cached.brandingEpoch >= brandingEpoch) {
        return cached.issuer;
      }
      return loads.run(
        `${key}@${claimsEpoch}:${brandingEpoch}`,
        () => findGtinIssuer(db, environment, gtin),
        (issuer) => {
          if (cache.size > 50_000) cache.clear();
          cache.set(key, { issuer, until: Date.now() + cacheMs, claimsEpoch, brandingEpoch });
        },
      );
    },
    forgetAll(): void {
      cache.clear();
      loads.forget();
    },
  };
}
export type GtinIssuers = ReturnType<typeof createGtinIssuers>;
