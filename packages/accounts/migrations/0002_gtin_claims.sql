-- Who may sign codes for which GTINs: a GTIN-14, or a GS1 Company Prefix (4 to 12 digits) that covers
-- every GTIN-14 whose digits after the indicator begin with it. A claim of environment 'live' covers
-- both environments; 'test' only the test environment. Claims of different accounts never overlap
-- while active (checked under an advisory lock when a claim is made, since overlap of prefixes is
-- not a constraint SQL can express). Rows are never deleted: a revoked claim keeps its history.
-- 'registered': the restricted-circulation GTIN of an auction object, owned by the account that registered it.
CREATE TABLE gtin_claims (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  kind text NOT NULL CHECK (kind IN ('gtin', 'prefix')),
  value text NOT NULL CHECK (value ~ '^[0-9]{4,14}$'),
  source text NOT NULL CHECK (source IN ('granted', 'claimed', 'migrated', 'registered')),
  created_by text,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  revoked_at timestamptz,
  revoked_by text,
  CHECK ((kind = 'gtin') = (length(value) = 14))
);
-- Ownership of a GTIN is looked up by the claim values that could cover it (the GTIN and its prefixes).
CREATE INDEX gtin_claims_active_by_value ON gtin_claims (value) WHERE revoked_at IS NULL;
CREATE INDEX gtin_claims_by_account ON gtin_claims (account_id, created_at DESC, id DESC);
