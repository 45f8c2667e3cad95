-- What the public resolver page shows of a brand (docs/RESOLVER.md, "The brand"), per account and
-- environment: set with PUT /api/v1/account/branding and …/logo (the gateway), read by
-- verify-service when it answers a scan. The logo is the PNG the gateway re-encoded from the upload,
-- never the uploaded bytes; it is served by its SHA-256 from /resolver/logos/<sha256>.png.
CREATE TABLE account_branding (
  account_id text NOT NULL REFERENCES accounts (id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  display_name text CHECK (char_length(display_name) BETWEEN 1 AND 80),
  primary_color text CHECK (primary_color ~ '^#[0-9a-f]{6}$'),
  text_color text CHECK (text_color ~ '^#[0-9a-f]{6}$'),
  logo_sha256 text CHECK (logo_sha256 ~ '^[0-9a-f]{64}$'),
  logo_png bytea,
  logo_width integer,
  logo_height integer,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (account_id, environment),
  CHECK ((logo_sha256 IS NULL) = (logo_png IS NULL))
);
CREATE INDEX account_branding_by_logo ON account_branding (logo_sha256) WHERE logo_sha256 IS NOT NULL;
