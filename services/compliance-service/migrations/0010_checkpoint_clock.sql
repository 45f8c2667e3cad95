-- The times checkpoints are signed with, across every replica (src/checkpoint-clock.ts): a lease
-- that every time handed out stays within. A replica writes it ahead of its clock about once a
-- second, not once a checkpoint: 0009's row update per checkpoint (`checkpoint_signed_at`) put a
-- write and its commit in every root and proof request (proof p99 4.9 → 6.5 ms). Starts at the
-- latest time 0009 recorded, so no checkpoint is dated before one signed under it; that column is
-- no longer written (the release before writes it still, harmlessly, during a rolling update).
CREATE TABLE checkpoint_clock (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  lease_until timestamptz NOT NULL
);
INSERT INTO checkpoint_clock (lease_until)
  SELECT coalesce(max(checkpoint_signed_at), 'epoch') FROM provenance_assets;
