import type { Cache } from '@hallmark/cache';
import { type CodeReport, HallmarkError, type Principal, type ReportCodeBody } from '@hallmark/contracts';
import { randomHex } from '@hallmark/crypto';
import type { SqlDatabase } from '@hallmark/sql';
import { readLink } from './read-link.ts';
import { scanSubject } from './verify-code.ts';

/**
 * POST /code/report: a code seen on a fake. The report is stored, and the code's later
 * verifications carry KNOWN_COUNTERFEIT_PATTERN. The link must parse; its signature is not checked,
 * since cloned labels carry valid ones.
 */
export async function reportCode(
  deps: { db: SqlDatabase; cache: Cache; clock: () => Date },
  request: { principal: Principal; client: { keyId: string; address: string }; body: ReportCodeBody },
): Promise<CodeReport> {
  const link = readLink(request.body);
  const now = deps.clock();
  const reportId = `rep_${randomHex(10)}`;
  const { principal } = request;
  if ((request.body.reason?.length ?? 0) > 1000)
    throw new HallmarkError('VALIDATION_ERROR', 'The reason is longer than 1000 characters.');
  await deps.db.query(
    `INSERT INTO code_reports (report_id, account_id, environment, gtin, serial, reason, reported_by_key, reported_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [
      reportId,
      principal.accountId,
      principal.environment,
      link.gtin,
      link.serial,
      request.body.reason ?? null,
      request.client.keyId,
      now,
    ],
  );
  await deps.cache.markReported(scanSubject(principal.environment, link.gtin, link.serial), 400 * 86_400_000);
  return { reportId, gtin: link.gtin, serial: link.serial, reportedAt: now.toISOString() };
}
