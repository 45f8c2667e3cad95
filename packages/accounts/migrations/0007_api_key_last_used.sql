-- When each API key was last used (GET /api/v1/keys, lastUsedAt). Kept apart from api_keys so the
-- gateways' batched writes (every 2 s, only for keys used since the last one) do not move the
-- `api_keys` cache epoch (accounts migration 0004), which would empty every replica's key cache.
-- Each gateway keeps the keys used since its last write in memory and upserts them in one
-- statement; the later time wins when replicas write the same key.
CREATE TABLE api_key_last_used (
  key_id text PRIMARY KEY REFERENCES api_keys (id) ON DELETE CASCADE,
  last_used_at timestamptz NOT NULL
);
