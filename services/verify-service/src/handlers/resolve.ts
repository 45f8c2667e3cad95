import type { CodeLookup, Environment, ResolvedScan, VerificationResult } from '@hallmark/contracts';
import { randomHex } from '@hallmark/crypto';
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

/**
 * A shopper's report from the resolver page. Stored against the code's owner for review; unlike a
 * report made with an API key it does not mark the code as counterfeit, since anyone can send it.
 */
export async function publicReport(
  deps: VerifyDeps,
  request: { url: string; reason?: string | undefined },
  requestId: string,
): Promise<{ recorded: boolean }> {
  const link = readLink({ url: request.url });
  const issued = await findIssued(deps, link.gtin, link.serial, requestId);
  const owner = issued?.codes[0];
  if (!issued || !owner) return { recorded: false };
  await deps.db.query(
    `INSERT INTO code_reports (report_id, account_id, environment, gtin, serial, reason, reported_by_key, reported_at)
     VALUES ($1, $2, $3, $4, $5, $6, 'public-resolver', $7)`,
    [`rep_${randomHex(10)}`, owner.accountId, issued.environment, link.gtin, link.serial, request.reason ?? null, deps.clock()],
  );
  return { recorded: true };
}
