import { findGtinIssuer } from '@hallmark/accounts';
import type { CodeLookup, Environment, ResolvedIssuer, ResolvedScan, VerificationResult } from '@hallmark/contracts';
import { readLink } from './read-link.ts';
import { type VerifyDeps, verifyCode } from './verify-code.ts';

/** The codes issued for an item, looking in live first, then test: a printed link names no environment. */
async function findIssued(
  deps: VerifyDeps,
  gtin: string,
  serial: string,
  requestId: string,
): Promise<{ environment: Environment; codes: CodeLookup[] } | undefined> {
  for (const environment of ['live', 'test'] as const) {
    const codes = await deps.codes.find(environment, gtin, serial, requestId);
    if (codes.length > 0) return { environment, codes };
  }
  return undefined;
}

/**
 * A scan on the public resolver: the same verification and risk rules as POST /code/verify, on
 * behalf of the code's owner (whose risk thresholds apply), the client being the viewer's address.
 * A link for which no code was ever issued is answered with `codeFound: false` and no scan.
 */
export async function resolveScan(
  deps: VerifyDeps,
  request: { url: string; client: { address: string } },
  requestId: string,
): Promise<ResolvedScan> {
  const link = readLink({ url: request.url });
  const issued = await findIssued(deps, link.gtin, link.serial, requestId);
  if (!issued) return { codeFound: false, environment: null, productName: null, result: null };
  const owner = issued.codes[0] as CodeLookup;
  const [issuer, result] = await Promise.all([
    issuerOf(deps, issued.environment, link.gtin, owner.accountId),
    verifyCode(
      deps,
      {
        principal: { accountId: owner.accountId, environment: issued.environment },
        client: { keyId: 'resolver', address: request.client.address },
        body: { url: request.url },
        view: 'full',
      },
      requestId,
    ) as Promise<VerificationResult>,
  ]);
  const name = owner.metadata.name;
  return {
    codeFound: true,
    environment: issued.environment,
    productName: typeof name === 'string' ? name : null,
    result,
    ...(issuer !== undefined ? { issuer } : {}),
  };
}

/**
 * Who the page may name as the code's issuer: the account that owns the GTIN (its claim), with its
 * branding; null when no account owns it (the operator signed the code). Undefined, so the page names
 * nobody, when the owner is not the account whose code this is (a claim that changed meanwhile).
 */
async function issuerOf(
  deps: VerifyDeps,
  environment: Environment,
  gtin: string,
  codeOwner: string,
): Promise<ResolvedIssuer | null | undefined> {
  const issuer = await findGtinIssuer(deps.db, environment, gtin);
  if (!issuer) return null;
  return issuer.accountId === codeOwner ? issuer : undefined;
}
