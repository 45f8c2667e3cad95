import type { Environment, Jwks } from '@hallmark/contracts';
import { ed25519Jwk } from '@hallmark/crypto';
import { environmentsCovered } from './gtin-ownership.ts';
import type { VerificationKeyRow } from './verification-key-store.ts';

/** An active claim, as the key set lists it. */
export interface PublishedClaim {
  accountId: string;
  environment: Environment;
  kind: 'gtin' | 'prefix';
  value: string;
}

/**
 * The public key set (`/.well-known/jwks.json`): every key a code may have been signed with, each
 * with the GTINs and prefixes its account's claims let it sign for in its environment, and the
 * owners with no key of an environment. Claims are grouped by account first: each key filtered
 * every claim of every account (keys × claims; 100 keys and 100,000 registered objects' claims were
 * ten million comparisons a build).
 */
export function publishedKeySet(
  rows: ReadonlyArray<VerificationKeyRow & { is_operator: boolean }>,
  claims: readonly PublishedClaim[],
): Jwks {
  const claimsByAccount = new Map<string, PublishedClaim[]>();
  for (const claim of claims) {
    const own = claimsByAccount.get(claim.accountId);
    if (own) own.push(claim);
    else claimsByAccount.set(claim.accountId, [claim]);
  }
  const jwks: Jwks = {
    keys: rows.map((row) => {
      // What this key may sign for: its account's claims that cover the key's environment.
      const covering = (claimsByAccount.get(row.account_id) ?? []).filter((claim) =>
        environmentsCovered(claim.environment).includes(row.environment),
      );
      return {
        ...ed25519Jwk(Buffer.from(row.public_key, 'base64url'), row.id),
        hallmark_environment: row.environment,
        hallmark_account: row.account_id,
        // Only a signing key (held by the service) signs checkpoints and webhooks; a public key's private half is the account's.
        hallmark_key_type: row.type,
        hallmark_gtins: covering.filter((claim) => claim.kind === 'gtin').map((claim) => claim.value),
        hallmark_gtin_prefixes: covering.filter((claim) => claim.kind === 'prefix').map((claim) => claim.value),
        ...(row.is_operator ? { hallmark_signs_unowned: true as const } : {}),
        // A signing key rotated out signs no checkpoint after this (docs/COMPLIANCE.md): an auditor reads it.
        ...(row.type === 'signing' && row.retired_at ? { hallmark_retired_at: new Date(row.retired_at).toISOString() } : {}),
      };
    }),
  };
  // An owner without a key of an environment leaves no trace on any key: say so, or an offline
  // verifier would take the operator's codes of its GTINs (made before the grant) for genuine.
  const keyed = new Set(rows.map((row) => `${row.account_id}\n${row.environment}`));
  const keyless = new Map<string, NonNullable<Jwks['hallmark_owners_without_keys']>[number]>();
  for (const claim of claims) {
    for (const environment of environmentsCovered(claim.environment)) {
      const owner = `${claim.accountId}\n${environment}`;
      if (keyed.has(owner)) continue;
      const entry = keyless.get(owner) ?? {
        hallmark_account: claim.accountId,
        hallmark_environment: environment,
        hallmark_gtins: [],
        hallmark_gtin_prefixes: [],
      };
      (claim.kind === 'gtin' ? entry.hallmark_gtins : entry.hallmark_gtin_prefixes).push(claim.value);
      keyless.set(owner, entry);
    }
  }
  if (keyless.size > 0) jwks.hallmark_owners_without_keys = [...keyless.values()];
  return jwks;
}
