import type { Bus, Subscription } from '@hallmark/bus';
import type { SqlExecutor } from '@hallmark/sql';

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
  verifiedBy: string;
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

async function insertScans(db: SqlExecutor, rows: readonly object[]): Promise<void> {
  await db.query(
    `INSERT INTO scans (scan_id, environment, gtin, serial, verdict, risk_indicators, scan_number, scanned_at, verified_by, latitude, longitude)
         SELECT r.scan_id, r.environment, r.gtin, r.serial, r.verdict,
                ARRAY(SELECT jsonb_array_elements_text(r.risk_indicators)), r.scan_number, r.scanned_at, r.verified_by, r.latitude, r.longitude
         FROM jsonb_to_recordset($1::jsonb) AS r(scan_id uuid, environment text, gtin text, serial text, verdict text, risk_indicators jsonb,
           scan_number integer, scanned_at timestamptz, verified_by text, latitude double precision, longitude double precision)
         ON CONFLICT (scan_id) DO NOTHING`,
    [JSON.stringify(rows)],
  );
}
