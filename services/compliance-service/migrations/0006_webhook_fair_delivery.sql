-- Fair delivery (docs/WEBHOOKS.md, "Delivery and retries"): the worker claims at most a few
-- deliveries in flight per endpoint and per account, and holds back an endpoint whose last attempt
-- failed for its own backoff, so one account's backlog at a dead endpoint cannot take every slot.
-- failure_streak: failed attempts in a row (a success ends it); held_until: until then the
-- endpoint's messages are not claimed (the retry schedule's step for the streak). Both columns are
-- instant to add; the release before ignores them.
ALTER TABLE webhook_endpoints ADD COLUMN failure_streak integer NOT NULL DEFAULT 0;
ALTER TABLE webhook_endpoints ADD COLUMN held_until timestamptz;
-- An endpoint's oldest due messages, read for each endpoint at every claim.
CREATE INDEX webhook_messages_due_by_endpoint ON webhook_messages (endpoint_id, next_attempt_at) WHERE status = 'pending';
-- Deliveries in flight (a lease set), counted per endpoint and account at every claim: few rows.
CREATE INDEX webhook_messages_leased ON webhook_messages (lease_until) WHERE lease_token IS NOT NULL;
