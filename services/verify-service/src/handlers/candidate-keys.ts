import type { PublicKeyEntry, VerificationKeys } from '@hallmark/accounts';
import { verifyCodeSignatureForRequest } from '@hallmark/codes';
import type { CodeLookup, Environment, Principal } from '@hallmark/contracts';
import { type DigitalLink, isObjectLabel } from '@hallmark/gs1';
import type { CodeDirectory, ItemCodes } from '../code-directory.ts';

/** A scanned link as readLink gives it: a Digital Link with its serial and signature. */
export type SignedLink = DigitalLink & { serial: string; signature: string };

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
export async function signingKeyOf(keys: readonly PublicKeyEntry[], link: SignedLink): Promise<string | undefined> {
  for (const { kid, keyObject } of keys) {
    const fields = { kid, gtin: link.gtin, serial: link.serial, batch: link.batch, variant: link.variant, expiry: link.expiry };
    if (await verifyCodeSignatureForRequest(keyObject, fields, link.signature)) return kid;
  }
  return undefined;
}

/** What checking a link's signature in one environment found (signatureCheck). */
export interface SignatureCheck {
  /** The item's stored codes and the GTIN's signer in the environment. */
  item: ItemCodes;
  /** The GTIN's signer, if anyone signs it in the environment. */
  signer: Principal | undefined;
  /** The usable candidate keys, in candidate order; none when nothing here could have signed the link. */
  keys: PublicKeyEntry[];
  /** The first of them under which the link's signature verifies. */
  matchedKid: string | undefined;
}

/**
 * The item's codes, its candidate keys and the one that signed the link, in one environment: the
 * look-up and Ed25519 check POST /code/verify and the resolver share (the resolver makes it once
 * and hands it to the verification).
 */
export async function signatureCheck(
  codes: CodeDirectory,
  keys: VerificationKeys,
  environment: Environment,
  link: SignedLink,
  requestId: string,
): Promise<SignatureCheck> {
  const checkItem = async (item: ItemCodes): Promise<SignatureCheck> => {
    const signer = item.signerAccountId ? { accountId: item.signerAccountId, environment } : undefined;
    const usable = await usableCandidateKeys(keys, await candidateKeys(keys, item.codes, signer), environment);
    const matchedKid = usable.length > 0 ? await signingKeyOf(usable, link) : undefined;
    return { item, signer, keys: usable, matchedKid };
  };
  const checked = await checkItem(await codes.findItem(environment, link.gtin, link.serial, requestId));
  if (checked.item.codes.length > 0) return checked;
  // Signed by a service signing key, yet no code of the item: a leaked key's work (verify-code.ts,
  // unissued), or a code made since the directory remembered the item as having none (2 s: a page
  // view of a made-up link to the brand's next serial made the genuine code just issued read as
  // SUSPICIOUS). Asked again, fresh, before it is judged unissued; rare (the rest is cached).
  // An auction object's label has no code at code-service (auction-service alone records it) and is
  // in the directory once the projection has it: one signed by none of the signer's active keys,
  // while the directory remembered it as unknown, is asked again too, since a label registered just
  // before a rotation is signed by the key rotated out (it read COUNTERFEIT for 2 s, until 2026-12-06).
  const bySigningKey = checked.keys.find((key) => key.kid === checked.matchedKid)?.type === 'signing';
  const askAgain = isObjectLabel(link.gtin, link.serial) ? checked.matchedKid === undefined : bySigningKey;
  if (!askAgain) return checked;
  const fresh = await codes.findItem(environment, link.gtin, link.serial, requestId, { fresh: true });
  // Still none, under the same signer: the same candidates and signature, not checked again.
  if (fresh.codes.length === 0 && fresh.signerAccountId === checked.item.signerAccountId) return { ...checked, item: fresh };
  return checkItem(fresh);
}
