-- Fair delivery counts real deliveries (docs/WEBHOOKS.md, "Fair delivery"): one row per attempt
-- in flight, written with its claim and removed when the attempt ends (or, for a worker that died,
-- ignored once lease_until passes and deleted by the next claim). Kept apart from the message row on
-- purpose: a replay clears the message's lease and deleting an endpoint removes its messages, while
-- the connection they started is still open; counted from this table, it holds its endpoint's and
-- account's place until it ends. No foreign key, so a deleted endpoint's deliveries stay counted.
-- A few rows per replica (16 at most each): the claim reads it whole, no index is needed.
CREATE TABLE webhook_deliveries_in_flight (
  lease_token text NOT NULL,
  endpoint_id text NOT NULL,
  message_id text NOT NULL,
  account_id text NOT NULL,
  lease_until timestamptz NOT NULL,
  PRIMARY KEY (lease_token, endpoint_id, message_id)
);
