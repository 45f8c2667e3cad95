-- The embedded form's cache state (string entries, quota counters, scan histories), written behind
-- the memory cache every ~100 ms and read back at start (packages/cache/src/journaled-cache.ts).
-- The distributed form keeps the same state in Redis and never writes here.
CREATE TABLE cache_state (
  kind text NOT NULL CHECK (kind IN ('entry', 'quota', 'scan')),
  key text NOT NULL,
  state jsonb NOT NULL,
  -- Unix milliseconds by the cache's clock; NULL never expires.
  expires_at_ms bigint,
  PRIMARY KEY (kind, key)
);
CREATE INDEX cache_state_by_expiry ON cache_state (expires_at_ms) WHERE expires_at_ms IS NOT NULL;
