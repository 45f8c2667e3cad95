-- Idempotency-Key (services/gateway/src/idempotency.ts): one row per key of an account, environment
-- and operation. While the first attempt runs, `claim` holds its token and `lease_until` when the
-- claim lapses (an attempt cut off by a crash leaves a row a retry takes over after that); once it
-- answered 2xx, `status`, `content_type` and `answer` hold the answer replayed to retries. Only the
-- SHA-256 of the key is kept, and the answer is sealed (AES-256-GCM) under a key derived from the
-- Idempotency-Key itself: answers carry secrets shown once (API keys, transfer codes), which this
-- database otherwise never holds. Rows live 24 h from the first attempt; the gateway sweeps them.
CREATE TABLE idempotent_requests (
  account_id text NOT NULL,
  environment text NOT NULL,
  operation text NOT NULL,
  key_hash text NOT NULL,
  request_hash text NOT NULL,
  claim text,
  lease_until timestamptz,
  status integer,
  content_type text,
  answer text,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (account_id, environment, operation, key_hash),
  CHECK ((claim IS NULL) = (status IS NOT NULL))
);
CREATE INDEX idempotent_requests_by_expiry ON idempotent_requests (expires_at);
