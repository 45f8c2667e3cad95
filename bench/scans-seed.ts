// Seeding stored scans for `pnpm bench:scans` (issue #21), the same in both forms: straight into
// verify-service's tables by SQL, as its scan-history projection stores them.
import type { SqlExecutor } from '@hallmark/sql';

export interface ScanSeed {
  accountId: string;
  gtin: string;
  /** How many scans, spread evenly over `days` up to now, newest first (row n = 1 is the newest). */
  total: number;
  days: number;
  /** The newest scan's time. */
  now: Date;
  /** Scans per statement. */
  chunk: number;
  /** Runs between statements (PGlite: a CHECKPOINT, or its WAL grows with every row). */
  afterChunk?: () => Promise<void>;
  onProgress?: (seeded: number) => void;
}

/** Codes the scans fall on: 100,000 in all; the suspicious and counterfeit scans fall on the first 500 ("cloned"). */
export const seededCodes = 100_000;
export const clonedCodes = 500;
/** Pending reports filed on the first cloned codes (S0, S1, …): the owner's review queue. */
export const seededReports = 200;

/**
 * One chunk of scans [start, end], in one statement that is verify-service's projection's own
 * (src/scan-history.ts, insertScans) with generate_series in place of the event's JSON: the rows
 * inserted, then from them the hourly counts by verdict, flag and country (scan_counts_hourly) and
 * the suspicious/counterfeit scans per code and day (scan_code_days), added with ON CONFLICT as the
 * projection adds them. The scans: 93% AUTHENTIC, 5% SUSPICIOUS, 2% COUNTERFEIT (those on the 500
 * cloned codes), 3% flagged EXCESSIVE_SCANS, 2% KNOWN_COUNTERFEIT_PATTERN + GEOGRAPHIC_IMPOSSIBILITY;
 * 50 batches; 40% with a location and one of ten countries, independent of verdict and flags, so
 * filters combine as they would in life.
 */
const seedChunkSql = (days: number) => `
WITH inserted AS (
  INSERT INTO scans (scan_id, environment, account_id, gtin, serial, batch, verdict, risk_indicators, scan_number,
                     scanned_at, verified_by, latitude, longitude, country)
  SELECT gen_random_uuid(), 'live', $1, $2,
         'S' || CASE WHEN n % 100 < 7 THEN n % ${clonedCodes} ELSE n % ${seededCodes} END,
         'L' || (n % 50),
         CASE WHEN n % 100 < 2 THEN 'COUNTERFEIT' WHEN n % 100 < 7 THEN 'SUSPICIOUS' ELSE 'AUTHENTIC' END,
         CASE WHEN n % 100 BETWEEN 2 AND 4 THEN ARRAY['EXCESSIVE_SCANS']
              WHEN n % 100 BETWEEN 5 AND 6 THEN ARRAY['KNOWN_COUNTERFEIT_PATTERN', 'GEOGRAPHIC_IMPOSSIBILITY']
              ELSE ARRAY[]::text[] END,
         1 + n / ${seededCodes},
         $6::timestamptz - (n::double precision / $3) * interval '${days} days',
         $1,
         CASE WHEN (n / 100) % 5 < 2 THEN 40 + (n % 20) END,
         CASE WHEN (n / 100) % 5 < 2 THEN (n % 30) - 5 END,
         CASE WHEN (n / 100) % 5 < 2 THEN (ARRAY['FR','DE','IT','ES','GB','US','CN','BR','IN','JP'])[1 + (n / 500) % 10] END
    FROM generate_series($4::bigint, $5::bigint) AS n
  RETURNING account_id, environment, gtin, serial, verdict, risk_indicators, scanned_at, country
),
counted AS (
  SELECT account_id, environment, 'verdict' AS dimension, date_trunc('hour', scanned_at) AS hour, verdict AS value FROM inserted
  UNION ALL
  SELECT account_id, environment, 'flag', date_trunc('hour', scanned_at), flag FROM inserted, unnest(risk_indicators) AS flag
  UNION ALL
  SELECT account_id, environment, 'country', date_trunc('hour', scanned_at), country FROM inserted WHERE country IS NOT NULL
),
hourly AS (
  INSERT INTO scan_counts_hourly AS t (account_id, environment, dimension, hour, value, count)
    SELECT account_id, environment, dimension, hour, value, count(*) FROM counted GROUP BY 1, 2, 3, 4, 5
    ON CONFLICT (account_id, environment, dimension, hour, value) DO UPDATE SET count = t.count + excluded.count
)
INSERT INTO scan_code_days AS d (account_id, environment, day, gtin, serial, suspicious, counterfeit, last_scanned_at)
  SELECT account_id, environment, (scanned_at AT TIME ZONE 'UTC')::date, gtin, serial,
         count(*) FILTER (WHERE verdict = 'SUSPICIOUS'), count(*) FILTER (WHERE verdict = 'COUNTERFEIT'), max(scanned_at)
    FROM inserted WHERE verdict <> 'AUTHENTIC' GROUP BY 1, 2, 3, 4, 5
  ON CONFLICT (account_id, environment, day, gtin, serial) DO UPDATE
    SET suspicious = d.suspicious + excluded.suspicious, counterfeit = d.counterfeit + excluded.counterfeit,
        last_scanned_at = greatest(d.last_scanned_at, excluded.last_scanned_at)`;

/** Seeds the scans, their rollups and a review queue of reports, then refreshes the planner's statistics. */
export async function seedScans(db: SqlExecutor, seed: ScanSeed): Promise<void> {
  // One "now" for every chunk, so the chunks meet without a gap or an overlap.
  const now = seed.now;
  for (let start = 1; start <= seed.total; start += seed.chunk) {
    const end = Math.min(seed.total, start + seed.chunk - 1);
    await db.query(seedChunkSql(seed.days), [seed.accountId, seed.gtin, seed.total, start, end, now]);
    await seed.afterChunk?.();
    seed.onProgress?.(end);
  }
  // Reports as verify-service stores them (handlers/report-code.ts), pending, on the first cloned codes.
  await db.query(
    `INSERT INTO code_reports (report_id, reporter_account_id, owner_account_id, environment, gtin, serial, reason,
                               reported_by_key, reported_at, source, status)
     SELECT 'rep_' || md5(n::text), NULL, $1, 'live', $2, 'S' || n, 'Seen on a fake', 'public-resolver',
            $3::timestamptz - n * interval '1 hour', 'resolver', 'pending'
       FROM generate_series(0, $4::int - 1) AS n`,
    [seed.accountId, seed.gtin, now, seededReports],
  );
  for (const table of ['scans', 'scan_counts_hourly', 'scan_code_days', 'code_reports']) await db.query(`ANALYZE ${table}`);
}
