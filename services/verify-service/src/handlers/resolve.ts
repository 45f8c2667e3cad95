import type { CodeLookup, Principal, ResolvedIssuer, ResolvedScan, VerificationResult } from '@hallmark/contracts';
import { publicPageVerifier } from '../scan-history.ts';
import { type SignatureCheck, signatureCheck } from './candidate-keys.ts';
import { readLink } from './read-link.ts';
import { type VerifyDeps, verifyCode } from './verify-code.ts';

type ScannedLink = ReturnType<typeof readLink>;

/** Where a scanned link's signature checked out: the environment, the account it vouches for, the stored code if any. */
interface SignedIn {
  signer: Principal;
  code: CodeLookup | undefined;
  /** The check that found it, handed to the verification so it is not made twice. */
  checked: SignatureCheck;
}

/** The first environment's signer that had candidate keys at all, under which a forged link's scan is recorded. */
interface CheckedBy {
  signer: Principal;
  checked: SignatureCheck;
}

/**
 * The environment whose candidate keys the link's signature verifies under, live first (a printed
 * link names no environment), with the candidates POST /code/verify uses (candidate-keys.ts): the
 * stored codes' keys, else the GTIN signer's own, so a code the brand signed outside Hallmark is
 * found as the API finds it.
 */
async function whereSigned(
  deps: VerifyDeps,
  link: ScannedLink,
  requestId: string,
): Promise<{ signed?: SignedIn; checkedBy?: CheckedBy }> {
  let checkedBy: CheckedBy | undefined;
  for (const environment of ['live', 'test'] as const) {
    const checked = await signatureCheck(deps.codes, deps.keys, environment, link, requestId);
    // Nobody signs this GTIN here, or none of the signer's candidate keys is usable: nothing here could have signed the link.
    if (!checked.signer || checked.keys.length === 0) continue;
    checkedBy ??= { signer: checked.signer, checked };
    const kid = checked.matchedKid;
    if (kid === undefined) continue;
    const code = checked.item.codes.find((candidate) => candidate.kid === kid);
    const signer = { accountId: code?.accountId ?? checked.signer.accountId, environment };
    // A key registered in both environments (one public key, one kid) whose live registration was
    // revoked: the link is a live one, forged since, never a test code. Before, it was shown as a test
    // code and its scan recorded in test, so its owner had no COUNTERFEIT scan and no alert. (The scan
    // is recorded as the API records it: under the live signer's other keys, if it has any.)
    if (environment === 'test' && (await deps.keys.find(kid, { accountId: signer.accountId, environment: 'live' }))) {
      return checkedBy?.signer.environment === 'live' ? { checkedBy } : {};
    }
    return { signed: { signer, code, checked }, checkedBy };
  }
  return checkedBy ? { checkedBy } : {};
}

/** The verification as POST /code/verify makes it, on behalf of `signer` (whose thresholds apply), the client the viewer. */
const verifyFor = (
  deps: VerifyDeps,
  request: { url: string; client: { address: string } },
  signer: Principal,
  checked: SignatureCheck,
  requestId: string,
) =>
  verifyCode(
    deps,
    {
      principal: signer,
      client: { keyId: publicPageVerifier, address: request.client.address },
      body: { url: request.url },
      view: 'full',
    },
    requestId,
    checked,
  ) as Promise<VerificationResult>;

/**
 * A scan on the public resolver: the same verification and risk rules as POST /code/verify, on
 * behalf of the code's owner (whose risk thresholds apply), the client being the viewer's address.
 *
 * A link whose signature verifies under no candidate key is answered alike whether or not a code
 * with its serial was ever issued (`codeFound: false`, no product name, no environment, the GTIN's
 * live owner as the only name): a forged signature must not tell anyone which serials a brand
 * issued or what they are. A code made with a test key is answered `environment: "test"` and names
 * no issuer (a test claim is no brand's word to shoppers); the page shows it as test data, never as
 * a verdict.
 */
export async function resolveScan(
  deps: VerifyDeps,
  request: { url: string; client: { address: string } },
  requestId: string,
): Promise<ResolvedScan> {
  const link = readLink({ url: request.url });
  const { signed, checkedBy } = await whereSigned(deps, link, requestId);
  if (!signed) return forgedScan(deps, request, link, checkedBy, requestId);
  const live = signed.signer.environment === 'live';
  const [issuer, result] = await Promise.all([
    live ? issuerOf(deps, link.gtin, signed.signer.accountId) : undefined,
    verifyFor(deps, request, signed.signer, signed.checked, requestId),
  ]);
  const name = signed.code?.metadata.name;
  return {
    codeFound: true,
    environment: signed.signer.environment,
    productName: typeof name === 'string' ? name : null,
    result,
    ...(issuer !== undefined ? { issuer } : {}),
  };
}

/**
 * A link no candidate key signed. Its scan is recorded as POST /code/verify records a forged one (a
 * COUNTERFEIT scan under a subject of its own, the owner's alert), for the first signer that had
 * candidate keys; the answer is the same whatever is on record for the serial.
 */
async function forgedScan(
  deps: VerifyDeps,
  request: { url: string; client: { address: string } },
  link: ScannedLink,
  checkedBy: CheckedBy | undefined,
  requestId: string,
): Promise<ResolvedScan> {
  if (checkedBy) await verifyFor(deps, request, checkedBy.signer, checkedBy.checked, requestId);
  return forged(deps, link);
}

/** The one answer for a forged link: the GTIN's live owner named as that (public, per GTIN), nothing of the serial. */
async function forged(deps: VerifyDeps, link: ScannedLink): Promise<ResolvedScan> {
  const owner = await deps.issuers.issuerOf('live', link.gtin);
  return { codeFound: false, environment: null, productName: null, result: null, issuer: owner ?? null };
}

/**
 * Who the page may name as the code's issuer: the account that owns the GTIN (its live claim), with
 * its branding; null when no account owns it (the operator signed the code). Undefined, so the page
 * names nobody, when the owner is not the account whose code this is (a claim that changed meanwhile).
 */
async function issuerOf(deps: VerifyDeps, gtin: string, codeOwner: string): Promise<ResolvedIssuer | null | undefined> {
  const issuer = await deps.issuers.issuerOf('live', gtin);
  if (!issuer) return null;
  return issuer.accountId === codeOwner ? issuer : undefined;
}
