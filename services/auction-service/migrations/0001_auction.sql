-- Read models of auction objects and transfers. The objects' histories (the truth) are their
-- event-store streams `asset-<id>`; `auction_objects` is rebuilt from them after every change.
CREATE TABLE auction_objects (
  id text PRIMARY KEY,
  account_id text NOT NULL,
  environment text NOT NULL,
  service_serial text NOT NULL UNIQUE,
  title text NOT NULL,
  category text NOT NULL,
  status text NOT NULL,
  owner_id text NOT NULL,
  security_tier text NOT NULL,
  anchor_count integer NOT NULL,
  entropy_bits integer NOT NULL,
  spatial_relations integer NOT NULL,
  photo_count integer NOT NULL,
  photo_required integer NOT NULL,
  stream_version integer NOT NULL,
  registered_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX auction_objects_dashboard ON auction_objects (account_id, environment, registered_at DESC, id DESC);
CREATE INDEX auction_objects_status ON auction_objects (account_id, environment, status, registered_at DESC, id DESC);

CREATE TABLE auction_transfers (
  id text PRIMARY KEY,
  object_id text NOT NULL REFERENCES auction_objects (id),
  account_id text NOT NULL,
  environment text NOT NULL,
  from_owner_id text NOT NULL,
  to_owner_id text NOT NULL,
  sale_price numeric NOT NULL,
  sale_currency text NOT NULL,
  -- HMAC-SHA256 of the 6-digit code under a key derived from the master key; never the code.
  code_hash text NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  -- pending, completing (claimed by a confirm in progress), completed, locked
  status text NOT NULL,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  completed_at timestamptz
);
-- One open transfer per object.
CREATE UNIQUE INDEX auction_transfers_open ON auction_transfers (object_id) WHERE status IN ('pending', 'completing');
