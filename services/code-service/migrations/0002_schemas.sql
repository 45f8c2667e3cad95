-- Metadata schemas of an account and environment. Every change is a new version; old versions stay.
CREATE TABLE metadata_schemas (
  id text PRIMARY KEY,
  account_id text NOT NULL,
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  name text NOT NULL,
  vertical text NOT NULL,
  current_version integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  deleted_at timestamptz
);
CREATE INDEX metadata_schemas_by_owner ON metadata_schemas (account_id, environment, created_at DESC, id DESC);

CREATE TABLE metadata_schema_versions (
  schema_id text NOT NULL REFERENCES metadata_schemas (id),
  version integer NOT NULL,
  name text NOT NULL,
  vertical text NOT NULL,
  fields jsonb NOT NULL,
  additional_properties boolean NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (schema_id, version)
);
