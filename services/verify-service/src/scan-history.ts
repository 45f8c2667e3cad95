import type { Bus, Subscription } from '@hallmark/bus';
import type { SqlExecutor } from '@hallmark/sql';

/**
 * A scan's `verifiedBy` when the public verification page asked (a shopper's phone), as its client
 * key id: the page verifies on behalf of the code's owner, so the account alone would count the
 * page's scans as the owner's own (GET /scans `scannedBy`). Scans before 2026-12-05 carry the owner.
 */
export const publicPageVerifier = 'resolver';

/** One verification's scan, as recorded. */
export interface ScanRecorded {
  scanId: string;
  environment: string;
  gtin: string;
  serial: string;
  verdict: string;
  riskIndicators: string[];
  scanNumber: number;
  at: string;
  /** The verifying account, or publicPageVerifier. */
  verifiedBy: string;
  /** The account whose code (or GTIN) was scanned: whose scans API lists it. Absent when nobody's. */
  accountId?: string;
  batch?: string;
  /** ISO 3166-1 alpha-2, as the client sent it with the location (never derived from coordinates). */
  country?: string;
  location?: { latitude: number; longitude: number };
}

/** The event verify publishes on `scans.recorded`: the scans of a few milliseconds (scan-publisher.ts). */
export interface ScansRecorded {
  scans: ScanRecorded[];
}

export const scanRecordedSubject = 'scans.recorded';

/** The scans of one event; events written before scans were batched carry a single scan. */
function scansOf(payload: unknown): ScanRecorded[] {
  return 'scans' in (payload as object) ? (payload as ScansRecorded).scans : [payload as ScanRecorded];
}

/**
 * Writes scan events to the `scans` table, the scans of up to 64 events (each up to 256 scans) at a
 * time, 200 rows a statement. Idempotent by scan id, so a batch delivered twice (after a failure, or by JetStream's at-least-once) is written once.
 */
export async function projectScanHistory(bus: Bus, db: SqlExecutor): Promise<Subscription> {
  return bus.consumeEvents({
    durable: 'verify-service-scan-history',
    subject: scanRecordedSubject,
    maxBatch: 64,
    async handleBatch(events) {
      const rows = events.flatMap(({ payload }) =>
        scansOf(payload).map((scan) => ({
          scan_id: scan.scanId,
          environment: scan.environment,
          gtin: scan.gtin,
          serial: scan.serial,
          verdict: scan.verdict,
          risk_indicators: scan.riskIndicators,
          scan_number: scan.scanNumber,
          scanned_at: scan.at,
          verified_by: scan.verifiedBy,
          latitude: scan.location?.latitude ?? null,
          longitude: scan.location?.longitude ?? null,
          account_id: scan.accountId ?? null,
          batch: scan.batch ?? null,
          country: scan.country ?? null,
        })),
      );
      // At most 200 rows a statement, with a turn of the event loop between statements: in the
      // embedded form PGlite runs on the event loop, and one statement of a thousand rows held it
      // for ~30 ms under verification load (a stall every request in flight waited out).
      for (let start = 0; start < rows.length; start += maxRowsPerStatement) {
        if (start > 0) await new Promise((resolve) => setImmediate(resolve));
        await insertScans(db, rows.slice(start, start + maxRowsPerStatement));
      }
    },
  });
}

const maxRowsPerStatement = 200;

/**
 * Inserts the scans and, from the rows actually inserted (a redelivered scan is not counted twice),
 * adds them to the rollups the aggregates read (migrations/0005): counts per hour by verdict, by
 * flag and by country (the owner's own keys' countries only: another account's, a rival's, is its
 * word alone and filled a brand's map with countries of its choosing), and suspicious/counterfeit
 * scans per code and day. One statement, so the
 * rollups move with the rows or not at all. The JSON array of flags is read as text[] directly (a
 * subquery per row, as ARRAY(SELECT jsonb_array_elements_text(…)) was, costs the projection more).
 */
async function insertScans(db: SqlExecutor, rows: readonly object[]): Promise<void> {
  await db.query(
    `WITH inserted AS (
       INSERT INTO scans (scan_id, environment, gtin, serial, verdict, risk_indicators, scan_number, scanned_at, verified_by,
                          latitude, longitude, account_id, batch, country)
         SELECT r.scan_id, r.environment, r.gtin, r.serial, r.verdict,
                COALESCE(r.risk_indicators, '{}'), r.scan_number, r.scanned_at, r.verified_by, r.latitude, r.longitude,
                r.account_id, r.batch, r.country
         FROM jsonb_to_recordset($1::jsonb) AS r(scan_id uuid, environment text, gtin text, serial text, verdict text, risk_indicators text[],
           scan_number integer, scanned_at timestamptz, verified_by text, latitude double precision, longitude double precision,
           account_id text, batch text, country text)
         ON CONFLICT (scan_id) DO NOTHING
         RETURNING account_id, environment, gtin, serial, verdict, risk_indicators, scanned_at, country, verified_by
     ),
     -- Whole UTC hours whatever the session's TimeZone (date_trunc's third argument): in a zone with
     -- a half-hour offset (Asia/Kolkata) the hours started at :30 UTC, each holding halves of two.
     counted AS (
       SELECT account_id, environment, 'verdict' AS dimension, date_trunc('hour', scanned_at, 'UTC') AS hour, verdict AS value FROM inserted
        WHERE account_id IS NOT NULL
       UNION ALL
       SELECT account_id, environment, 'flag', date_trunc('hour', scanned_at, 'UTC'), flag FROM inserted, unnest(risk_indicators) AS flag
        WHERE account_id IS NOT NULL
       UNION ALL
       -- A country is the scanning client's word: only the owner's own keys' count on its map.
       SELECT account_id, environment, 'country', date_trunc('hour', scanned_at, 'UTC'), country FROM inserted
        WHERE account_id IS NOT NULL AND country IS NOT NULL AND verified_by = account_id
     ),
     hourly AS (
       INSERT INTO scan_counts_hourly AS t (account_id, environment, dimension, hour, value, count)
         SELECT account_id, environment, dimension, hour, value, count(*) FROM counted
          GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
         ON CONFLICT (account_id, environment, dimension, hour, value) DO UPDATE SET count = t.count + excluded.count
     )
     INSERT INTO scan_code_days AS d (account_id, environment, day, gtin, serial, suspicious, counterfeit, last_scanned_at)
       SELECT account_id, environment, (scanned_at AT TIME ZONE 'UTC')::date, gtin, serial,
              count(*) FILTER (WHERE verdict = 'SUSPICIOUS'), count(*) FILTER (WHERE verdict = 'COUNTERFEIT'), max(scanned_at)
         FROM inserted WHERE account_id IS NOT NULL AND verdict <> 'AUTHENTIC'
        GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
       ON CONFLICT (account_id, environment, day, gtin, serial) DO UPDATE
         SET suspicious = d.suspicious + excluded.suspicious, counterfeit = d.counterfeit + excluded.counterfeit,
             last_scanned_at = greatest(d.last_scanned_at, excluded.last_scanned_at)`,
    [JSON.stringify(rows)],
  );
}
