-- Tenants. The operator's account (made from HALLMARK_BOOTSTRAP_KEY) may provision others.
CREATE TABLE accounts (
  id text PRIMARY KEY,
  name text NOT NULL,
  tier text NOT NULL CHECK (tier IN ('free', 'starter', 'enterprise')),
  is_operator boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- API keys: only the SHA-256 of the secret is kept, with a short prefix to tell keys apart.
CREATE TABLE api_keys (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  name text NOT NULL,
  key_hash text NOT NULL UNIQUE,
  prefix text NOT NULL,
  scopes text[] NOT NULL,
  created_by text REFERENCES api_keys (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX api_keys_by_owner ON api_keys (account_id, environment, created_at DESC, id DESC);

-- Ed25519 keys that sign (service-managed, private part sealed under the master key) or verify
-- (registered by the account). The id is the key's RFC 7638 thumbprint, used as kid.
CREATE TABLE verification_keys (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  type text NOT NULL CHECK (type IN ('signing', 'public')),
  name text,
  public_key text NOT NULL,
  sealed_private_key text,
  status text NOT NULL CHECK (status IN ('active', 'retired', 'revoked')),
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  retired_at timestamptz,
  revoked_at timestamptz,
  CHECK ((type = 'signing') = (sealed_private_key IS NOT NULL))
);
CREATE UNIQUE INDEX one_active_signing_key ON verification_keys (account_id, environment) WHERE type = 'signing' AND status = 'active';
CREATE INDEX verification_keys_by_owner ON verification_keys (account_id, environment, created_at DESC, id DESC);
