-- Counterfeit reports (POST /code/report). A reported code answers KNOWN_COUNTERFEIT_PATTERN.
CREATE TABLE code_reports (
  report_id text PRIMARY KEY,
  account_id text NOT NULL,
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  gtin text NOT NULL,
  serial text NOT NULL,
  reason text,
  reported_by_key text NOT NULL,
  reported_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX code_reports_by_item ON code_reports (environment, gtin, serial);
