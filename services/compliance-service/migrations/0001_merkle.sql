-- The Merkle projection: one RFC 9162 tree per asset, kept as its perfect subtrees, so a root or a
-- proof reads O(log n) rows. Rebuilt from the event store by `hallmark projections rebuild`.
CREATE TABLE provenance_assets (
  asset_id text PRIMARY KEY,
  account_id text NOT NULL,
  environment text NOT NULL,
  -- A second name for the asset (an auction object's service_serial), unique within its owner.
  alias text,
  tree_size bigint NOT NULL,
  root_hash bytea NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX provenance_assets_alias ON provenance_assets (account_id, environment, alias) WHERE alias IS NOT NULL;

CREATE TABLE provenance_events (
  event_id text PRIMARY KEY,
  asset_id text NOT NULL,
  leaf_index bigint NOT NULL,
  UNIQUE (asset_id, leaf_index)
);

-- Node (level, idx) is the root of leaves [idx * 2^level, (idx + 1) * 2^level); level 0 holds leaf hashes.
CREATE TABLE merkle_nodes (
  asset_id text NOT NULL,
  level smallint NOT NULL,
  idx bigint NOT NULL,
  hash bytea NOT NULL,
  PRIMARY KEY (asset_id, level, idx)
);

-- Checkpoints of projections that commit them with their rows.
CREATE TABLE projection_checkpoints (
  name text PRIMARY KEY,
  cursor text NOT NULL
);
