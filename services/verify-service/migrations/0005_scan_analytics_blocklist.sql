-- Scan analytics (issue #21): the scans API reads `scans` by the code owner's account, newest first,
-- with keyset paging; the aggregates read hourly rollups kept by the scan-history projection in the
-- statement that inserts the scans (src/scan-history.ts), so they never scan the raw rows.
ALTER TABLE scans
  ADD COLUMN account_id text,
  ADD COLUMN batch text,
  ADD COLUMN country text;
-- Scans recorded before this named no owner: the code directory knows it.
UPDATE scans s SET account_id = d.account_id
  FROM code_directory d
 WHERE s.account_id IS NULL AND d.environment = s.environment AND d.gtin = s.gtin AND d.serial = s.serial;
-- GET /scans: newest first per account and environment (keyset on scanned_at, scan_id); the
-- filters by code narrow it further with scans_by_item or this index's prefix.
CREATE INDEX scans_by_account ON scans (account_id, environment, scanned_at DESC, scan_id DESC);
CREATE INDEX scans_by_account_item ON scans (account_id, environment, gtin, serial, scanned_at DESC);
-- The filters a brand uses most get an index each, so a rare value is found without walking every
-- scan of the account: by verdict, by batch (a recall), by country, and the flagged scans (a flag
-- filter walks only scans with some flag, a few percent).
CREATE INDEX scans_by_account_verdict ON scans (account_id, environment, verdict, scanned_at DESC, scan_id DESC);
CREATE INDEX scans_by_account_batch ON scans (account_id, environment, batch, scanned_at DESC, scan_id DESC) WHERE batch IS NOT NULL;
CREATE INDEX scans_by_account_country ON scans (account_id, environment, country, scanned_at DESC, scan_id DESC) WHERE country IS NOT NULL;
CREATE INDEX scans_flagged ON scans (account_id, environment, scanned_at DESC, scan_id DESC) WHERE risk_indicators <> '{}';
-- Counts per hour by one dimension: `verdict` (value: the verdict), `flag` (value: a risk indicator;
-- a scan with two flags counts once under each) and `country` (value: ISO 3166-1 alpha-2, only for
-- scans that carried one).
CREATE TABLE scan_counts_hourly (
  account_id text NOT NULL,
  environment text NOT NULL,
  dimension text NOT NULL CHECK (dimension IN ('verdict', 'flag', 'country')),
  hour timestamptz NOT NULL,
  value text NOT NULL,
  count bigint NOT NULL,
  PRIMARY KEY (account_id, environment, dimension, hour, value)
);
-- Suspicious and counterfeit scans per code and day: the top codes over any range of days.
CREATE TABLE scan_code_days (
  account_id text NOT NULL,
  environment text NOT NULL,
  day date NOT NULL,
  gtin text NOT NULL,
  serial text NOT NULL,
  suspicious bigint NOT NULL,
  counterfeit bigint NOT NULL,
  last_scanned_at timestamptz NOT NULL,
  PRIMARY KEY (account_id, environment, day, gtin, serial)
);
INSERT INTO scan_counts_hourly (account_id, environment, dimension, hour, value, count)
SELECT account_id, environment, 'verdict', date_trunc('hour', scanned_at), verdict, count(*)
  FROM scans WHERE account_id IS NOT NULL GROUP BY 1, 2, 4, 5;
INSERT INTO scan_counts_hourly (account_id, environment, dimension, hour, value, count)
SELECT account_id, environment, 'flag', date_trunc('hour', scanned_at), flag, count(*)
  FROM scans, unnest(risk_indicators) AS flag WHERE account_id IS NOT NULL GROUP BY 1, 2, 4, 5;
INSERT INTO scan_code_days (account_id, environment, day, gtin, serial, suspicious, counterfeit, last_scanned_at)
SELECT account_id, environment, (scanned_at AT TIME ZONE 'UTC')::date, gtin, serial,
       count(*) FILTER (WHERE verdict = 'SUSPICIOUS'), count(*) FILTER (WHERE verdict = 'COUNTERFEIT'), max(scanned_at)
  FROM scans WHERE account_id IS NOT NULL AND verdict <> 'AUTHENTIC' GROUP BY 1, 2, 3, 4, 5;

-- The blocklist (issue #21): codes, or a serial range of a GTIN, their owner marked as known
-- counterfeit or withdrawn. Unblocking sets removed_at; the row stays as the record.
CREATE TABLE code_blocklist (
  block_id text PRIMARY KEY,
  account_id text NOT NULL,
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  gtin text NOT NULL,
  serial_from text NOT NULL,
  serial_to text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('counterfeit', 'withdrawn')),
  reason text,
  created_at timestamptz NOT NULL,
  created_by_key text NOT NULL,
  removed_at timestamptz,
  removed_by_key text
);
CREATE INDEX code_blocklist_by_account ON code_blocklist (account_id, environment, created_at DESC, block_id DESC);
CREATE INDEX code_blocklist_active ON code_blocklist (environment, gtin) WHERE removed_at IS NULL;
