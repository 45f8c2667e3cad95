-- The installation this database belongs to: one row, made once. Its id is what a service claims
-- its namespace with on NATS and Redis (HALLMARK_NAMESPACE), so two installations that share them
-- under one namespace are told apart, and the second refuses to start (src/namespace-claim.ts).
CREATE TABLE installation (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO installation DEFAULT VALUES;
