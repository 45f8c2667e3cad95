import type { PublicKeyEntry, VerificationKeys } from '@hallmark/accounts';
import { verifyCodeSignatureForRequest } from '@hallmark/codes';
import type { CodeLookup, Environment, Principal } from '@hallmark/contracts';
import type { DigitalLink } from '@hallmark/gs1';

/** A key that may have signed an item's code, looked up as its owner's (accounts migration 0009). */
export interface CandidateKey {
  kid: string;
  accountId: string;
}

/**
 * The keys that may have signed an item's code (docs/API.md, "Candidate keys"): the key each of the
 * signer's stored codes of the item was signed with; for a code made elsewhere (none stored), the
 * signer's own keys, its active registered public keys and its active signing key, never the
 * caller's. None without a signer. POST /code/verify and the resolver choose them alike, so a code
 * the API calls authentic is not "never issued" on the public page.
 */
export async function candidateKeys(
  keys: VerificationKeys,
  codes: readonly CodeLookup[],
  signer: Principal | undefined,
): Promise<CandidateKey[]> {
  if (codes.length > 0) return codes.map((code) => ({ kid: code.kid, accountId: code.accountId }));
  if (!signer) return [];
  return (await keys.unrecordedCodeKeyIds(signer)).map((kid) => ({ kid, accountId: signer.accountId }));
}

/**
 * The candidates that exist, are not revoked and belong to the environment, in candidate order. Each
 * is looked up as its owner's: only the owner's registration of a kid vouches for the owner's codes.
 */
export async function usableCandidateKeys(
  keys: VerificationKeys,
  candidates: readonly CandidateKey[],
  environment: Environment,
): Promise<PublicKeyEntry[]> {
  const found = await Promise.all(candidates.map(({ kid, accountId }) => keys.find(kid, { accountId, environment })));
  return found.filter(
    (key): key is PublicKeyEntry => key !== undefined && key.status !== 'revoked' && key.environment === environment,
  );
}

/** The first of the keys under which the link's signature verifies (over everything it signs), if any. */
export async function signingKeyOf(
  keys: readonly PublicKeyEntry[],
  link: DigitalLink & { serial: string; signature: string },
): Promise<string | undefined> {
  for (const { kid, keyObject } of keys) {
    const fields = { kid, gtin: link.gtin, serial: link.serial, batch: link.batch, variant: link.variant, expiry: link.expiry };
    if (await verifyCodeSignatureForRequest(keyObject, fields, link.signature)) return kid;
  }
  return undefined;
}
