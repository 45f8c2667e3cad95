-- Only a forged link's scan.counterfeit goes after an endpoint's other messages (worker.ts, claim):
-- anyone can cause those by the thousand. A scan.counterfeit whose signature checked out (a code the
-- brand blocklisted as counterfeit: a clone) is the brand's own alert and goes in due order with the
-- rest; before, it waited behind every forged one queued before it. `deferred` is set when the
-- message is written (outbox.ts); pending scan.counterfeit messages written before this migration
-- keep going last, as they did.
ALTER TABLE webhook_messages ADD COLUMN deferred boolean NOT NULL DEFAULT false;
UPDATE webhook_messages SET deferred = true WHERE status = 'pending' AND event_type = 'scan.counterfeit';
DROP INDEX webhook_messages_due_first_by_endpoint;
CREATE INDEX webhook_messages_due_first_by_endpoint ON webhook_messages (endpoint_id, next_attempt_at)
  WHERE status = 'pending' AND NOT deferred;
