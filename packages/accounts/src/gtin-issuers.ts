import type { Environment, ResolvedIssuer } from '@hallmark/contracts';
import type { SqlExecutor } from '@hallmark/sql';
import { findGtinIssuer } from './branding.ts';
import { type CacheEpochs, fixedCacheEpochs } from './cache-epochs.ts';
import { createGtinCache } from './gtin-cache.ts';
import type { GtinChanges } from './gtin-changes.ts';

/**
 * Who the public resolver page names as a GTIN's issuer (findGtinIssuer: the owner's name, colours
 * and logo), remembered briefly per GTIN, as GtinSigners remembers its signer: every scan of a page
 * asked the database for it, which in the embedded form was a statement on PGlite's one thread per
 * scan. The `gtins.ownership-changed` broadcast drops the GTINs it names (`changes`),
 * `accounts.branding-changed` drops all, and an entry loaded before the `gtin_claims` or
 * `account_branding` epoch moved (or `gtin_claims_added`, for a GTIN nobody owned) is taken as gone
 * on use, so a new owner or a new logo shows on every replica within a second even when the
 * broadcast is lost.
 */
export function createGtinIssuers(
  db: SqlExecutor,
  options: { cacheMs?: number; epochs?: CacheEpochs; changes?: GtinChanges } = {},
) {
  const cache = createGtinCache<ResolvedIssuer | undefined>({
    epochs: options.epochs ?? fixedCacheEpochs,
    tables: ['gtin_claims', 'account_branding'],
    cacheMs: options.cacheMs ?? 5_000,
    ...(options.changes ? { changes: options.changes } : {}),
    unowned: (issuer) => issuer === undefined,
  });
  return {
    issuerOf: (environment: Environment, gtin: string): Promise<ResolvedIssuer | undefined> =>
      cache.get(environment, gtin, () => findGtinIssuer(db, environment, gtin)),
    forgetAll: () => cache.forgetAll(),
  };
}
export type GtinIssuers = ReturnType<typeof createGtinIssuers>;
