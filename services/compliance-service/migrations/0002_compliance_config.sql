CREATE TABLE compliance_configs (
  account_id text NOT NULL,
  environment text NOT NULL,
  config jsonb NOT NULL,
  version integer NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (account_id, environment)
);
