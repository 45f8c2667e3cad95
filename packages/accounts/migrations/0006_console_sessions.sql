-- The web console's sessions (docs/SECURITY.md, "Console sessions"): signed in with an API key,
-- which the browser then never holds. The browser holds a random token in an HttpOnly cookie; only
-- its SHA-256 is kept here. A session acts with its key's scopes, in its own environment (a live
-- key's session may switch to test), and ends at `expires_at` (12 h after sign-in), at
-- `idle_expires_at` (30 min after its last use, moved at most once a minute), when signed out
-- (deleted), or when its key is revoked, expires or is deleted (the key is checked on every request).
CREATE TABLE console_sessions (
  id text PRIMARY KEY,
  token_hash text NOT NULL UNIQUE,
  key_id text NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  account_id text NOT NULL REFERENCES accounts (id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  idle_expires_at timestamptz NOT NULL,
  CHECK (idle_expires_at <= expires_at)
);
CREATE INDEX console_sessions_by_key ON console_sessions (key_id);
CREATE INDEX console_sessions_by_expiry ON console_sessions (idle_expires_at);
