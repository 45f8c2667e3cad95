-- verify-service's own copy of what verification needs of each code (issue #17), written by the
-- code directory projection (src/code-projection.ts) from the `code.generated` events, so that
-- verification keeps answering while code-service is down. One row per code, by asset id.
CREATE TABLE code_directory (
  asset_id text PRIMARY KEY,
  account_id text NOT NULL,
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  gtin text NOT NULL,
  serial text NOT NULL,
  batch text,
  -- YYMMDD as signed (AI 17), or null.
  expiry text,
  kid text NOT NULL,
  -- metadata.name, for the resolver's page.
  product_name text,
  expires_at timestamptz,
  created_at timestamptz NOT NULL
);
CREATE INDEX code_directory_by_item ON code_directory (environment, gtin, serial);

-- Checkpoints of verify-service's projections that commit them with their rows.
CREATE TABLE verify_projection_checkpoints (
  name text PRIMARY KEY,
  cursor text NOT NULL
);
