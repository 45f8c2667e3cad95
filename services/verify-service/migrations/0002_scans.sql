-- Every verification, written in batches from the scans.recorded events. The hot path keeps its
-- counters in Redis; this is the durable history (analytics, audits, and rebuilding counters).
CREATE TABLE scans (
  scan_id uuid PRIMARY KEY,
  environment text NOT NULL,
  gtin text NOT NULL,
  serial text NOT NULL,
  verdict text NOT NULL,
  risk_indicators text[] NOT NULL,
  scan_number integer NOT NULL,
  scanned_at timestamptz NOT NULL,
  verified_by text NOT NULL,
  latitude double precision,
  longitude double precision
);
CREATE INDEX scans_by_item ON scans (environment, gtin, serial, scanned_at);
