-- Which attempt noted `prepaid` (services/gateway/src/idempotency.ts, docs/API.md "Idempotency-Key"):
-- the claim token of the attempt that wrote it. An attempt spends its quota (in the counters: Redis,
-- or the embedded form's journal) and then notes it here: two writes, and a gateway killed between
-- them left the key without the note, so the retry paid again. The spend now also sets a marker for
-- the attempt's claim in the same atomic counters call; a retry that takes over a claim whose holder
-- noted nothing (prepaid_by is not that claim) asks the counters whether that attempt spent, and
-- closes the marker so it cannot spend later. NULL: noted by a gateway of the previous version, or
-- never noted.
ALTER TABLE idempotent_requests ADD COLUMN prepaid_by text;
