-- Generated codes. The event store holds each code's history; this table is what generation and
-- verification look codes up by.
CREATE TABLE codes (
  asset_id text PRIMARY KEY,
  account_id text NOT NULL,
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  gtin text NOT NULL,
  serial text NOT NULL,
  batch text,
  expiry text,
  kid text NOT NULL,
  signature text NOT NULL,
  url text NOT NULL,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz,
  UNIQUE (account_id, environment, gtin, serial)
);
CREATE INDEX codes_by_item ON codes (environment, gtin, serial);

-- Idempotency-Key: the first answer to a key, replayed to retries of the same request.
CREATE TABLE idempotency_keys (
  account_id text NOT NULL,
  environment text NOT NULL,
  key text NOT NULL,
  request_hash text NOT NULL,
  response jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, environment, key)
);
