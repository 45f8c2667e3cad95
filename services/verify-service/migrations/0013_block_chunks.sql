-- POST /blocklist/bulk stores a file 500 lines at a time. A chunk sent with the request's
-- Idempotency-Key (the gateway names it by the API key, the Idempotency-Key, the chunk's place and
-- its lines) keeps its results here, in the transaction that recorded its blocks: a retry of a file
-- answered 5xx after some chunks were stored is answered those chunks' results instead of blocking
-- their lines again. Rows older than two days are dropped by the next chunk of their account.
CREATE TABLE block_chunks (
  account_id text NOT NULL,
  environment text NOT NULL,
  chunk_key text NOT NULL,
  results jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, environment, chunk_key)
);
CREATE INDEX block_chunks_by_age ON block_chunks (account_id, created_at);
