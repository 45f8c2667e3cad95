import type { CodeStatus, Principal, RiskIndicator } from '@hallmark/contracts';
import type { SqlExecutor } from '@hallmark/sql';

// What verify-service knows of one of an account's codes (GET /codes/{assetId}): its scans, whether
// it was reported, and the block covering it. Three indexed reads: scans_by_account_item, the
// reports by item, and the active blocks of the GTIN.

interface ScanSummaryRow {
  count: number | string;
  first_at: Date | string | null;
  last_at: Date | string | null;
  flags: RiskIndicator[] | string | null;
}

const arrayOf = (value: RiskIndicator[] | string | null): RiskIndicator[] =>
  value === null ? [] : Array.isArray(value) ? value : value === '{}' ? [] : (value.slice(1, -1).split(',') as RiskIndicator[]);

const isoOrNull = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString());

export async function codeStatus(db: SqlExecutor, owner: Principal, gtin: string, serial: string): Promise<CodeStatus> {
  const item = [owner.accountId, owner.environment, gtin, serial];
  const [scans, reports, blocks] = await Promise.all([
    db.query<ScanSummaryRow>(
      `SELECT count(*) AS count, min(scanned_at) AS first_at, max(scanned_at) AS last_at,
              (SELECT array_agg(DISTINCT flag ORDER BY flag) FROM scans f, unnest(f.risk_indicators) AS flag
                WHERE f.account_id = $1 AND f.environment = $2 AND f.gtin = $3 AND f.serial = $4) AS flags
         FROM scans WHERE account_id = $1 AND environment = $2 AND gtin = $3 AND serial = $4`,
      item,
    ),
    db.query<{ report_id: string; status: string; reason: string | null }>(
      // A confirmed report first, the first confirmed: the one verifiers are shown (report-code.ts,
      // "the first confirmation of a code stands"); the owner was shown the latest reported instead.
      // Then one still pending: a bogus report filed after a shopper's and dismissed showed the code
      // as `dismissed` while the shopper's waited (a review of 2026-12-06, hostile-brand-views).
      `SELECT report_id, status, decision_reason AS reason FROM code_reports
        WHERE owner_account_id = $1 AND environment = $2 AND gtin = $3 AND serial = $4
        ORDER BY (status = 'confirmed') DESC, CASE WHEN status = 'confirmed' THEN date_trunc('milliseconds', decided_at) END ASC,
                 CASE WHEN status = 'confirmed' THEN report_id END ASC, (status = 'pending') DESC, reported_at DESC LIMIT 1`,
      item,
    ),
    // Serial ranges compare byte by byte (as the in-memory blocks do), among serials of one length.
    db.query<{
      block_id: string;
      kind: 'counterfeit' | 'withdrawn';
      reason: string | null;
      serial_from: string;
      serial_to: string;
    }>(
      `SELECT block_id, kind, reason, serial_from, serial_to FROM code_blocklist
        WHERE account_id = $1 AND environment = $2 AND gtin = $3 AND removed_at IS NULL
          AND length(serial_from) = length($4::text)
          AND serial_from COLLATE "C" <= $4::text COLLATE "C" AND $4::text COLLATE "C" <= serial_to COLLATE "C"
        ORDER BY created_at DESC LIMIT 1`,
      item,
    ),
  ]);
  const summary = scans[0];
  const report = reports[0];
  const block = blocks[0];
  return {
    scans: {
      count: Number(summary?.count ?? 0),
      firstAt: isoOrNull(summary?.first_at ?? null),
      lastAt: isoOrNull(summary?.last_at ?? null),
      flags: arrayOf(summary?.flags ?? null),
    },
    reported: report !== undefined,
    reportStatus: (report?.status as CodeStatus['reportStatus']) ?? null,
    blocked: block
      ? {
          blockId: block.block_id,
          status: 'active',
          kind: block.kind,
          reason: block.reason,
          serialFrom: block.serial_from,
          serialTo: block.serial_to,
        }
      : report?.status === 'confirmed'
        ? { blockId: report.report_id, status: 'active', kind: 'report', reason: report.reason }
        : null,
  };
}
