-- An endpoint's due messages other than scan.counterfeit, in due order: the worker sends them before
-- the endpoint's scan.counterfeit messages, which anyone can cause by the thousand with forged links
-- (worker.ts, claim). The counterfeit ones are read through webhook_messages_due_by_endpoint.
CREATE INDEX webhook_messages_due_first_by_endpoint ON webhook_messages (endpoint_id, next_attempt_at)
  WHERE status = 'pending' AND event_type <> 'scan.counterfeit';
