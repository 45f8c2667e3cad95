import type { CodeLookup, Environment, ResolvedScan, VerificationResult } from '@hallmark/contracts';
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
  const result = (await verifyCode(
    deps,
    {
      principal: { accountId: owner.accountId, environment: issued.environment },
      client: { keyId: 'resolver', address: request.client.address },
      body: { url: request.url },
      view: 'full',
    },
    requestId,
  )) as VerificationResult;
  const name = owner.metadata.name;
  return { codeFound: true, environment: issued.environment, productName: typeof name === 'string' ? name : null, result };
}
