-- Standard Webhooks (docs/WEBHOOKS.md): an account's endpoints, the outbox of messages to deliver,
-- each delivery attempt, the checkpoints of the projections that write the outbox, and the
-- time-based thresholds already announced (each once).
CREATE TABLE webhook_endpoints (
  endpoint_id text PRIMARY KEY,
  account_id text NOT NULL,
  environment text NOT NULL,
  url text NOT NULL,
  description text NOT NULL DEFAULT '',
  event_types text[] NOT NULL,
  status text NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled')),
  disabled_reason text,
  -- whsec_ secrets sealed with AES-256-GCM under the master key, bound to the endpoint id.
  secret_sealed bytea NOT NULL,
  previous_secret_sealed bytea,
  previous_secret_expires_at timestamptz,
  -- Set by the first failed attempt after a success; five days of failures disable the endpoint.
  failing_since timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX webhook_endpoints_by_account ON webhook_endpoints (account_id, environment, created_at, endpoint_id);

-- The outbox: one row per message and endpoint. message_id is the webhook-id header, the same for
-- every attempt (the receiver's idempotency key), made from the cause so a cause written twice
-- writes one row.
CREATE TABLE webhook_messages (
  endpoint_id text NOT NULL REFERENCES webhook_endpoints (endpoint_id) ON DELETE CASCADE,
  message_id text NOT NULL,
  account_id text NOT NULL,
  environment text NOT NULL,
  event_type text NOT NULL,
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  lease_token text,
  lease_until timestamptz,
  last_response_code integer,
  delivered_at timestamptz,
  PRIMARY KEY (endpoint_id, message_id)
);
CREATE INDEX webhook_messages_due ON webhook_messages (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_messages_by_endpoint ON webhook_messages (endpoint_id, created_at DESC, message_id DESC);

CREATE TABLE webhook_attempts (
  attempt_id text PRIMARY KEY,
  endpoint_id text NOT NULL,
  message_id text NOT NULL,
  attempted_at timestamptz NOT NULL,
  status text NOT NULL CHECK (status IN ('succeeded', 'failed')),
  response_code integer,
  error text,
  duration_ms integer NOT NULL,
  FOREIGN KEY (endpoint_id, message_id) REFERENCES webhook_messages (endpoint_id, message_id) ON DELETE CASCADE
);
CREATE INDEX webhook_attempts_by_message ON webhook_attempts (endpoint_id, message_id, attempted_at);

CREATE TABLE webhook_checkpoints (
  name text PRIMARY KEY,
  cursor text NOT NULL
);

-- quota.threshold and key.expiring: each threshold announced once (the periodic check inserts
-- here first, ON CONFLICT DO NOTHING, in the transaction that writes the messages).
CREATE TABLE webhook_thresholds (
  account_id text NOT NULL,
  environment text NOT NULL,
  threshold text NOT NULL,
  recorded_at timestamptz NOT NULL,
  PRIMARY KEY (account_id, environment, threshold)
);
