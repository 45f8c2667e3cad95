-- Reports wait in the code owner's review queue (issue #16): a report changes no verdict until the
-- owner confirms it, which blocks the code. `account_id` used to be the reporter's account for API
-- reports and the owner's for the page's; it is now split in two.
ALTER TABLE code_reports RENAME COLUMN account_id TO reporter_account_id;
ALTER TABLE code_reports ALTER COLUMN reporter_account_id DROP NOT NULL;
ALTER TABLE code_reports
  ADD COLUMN owner_account_id text,
  ADD COLUMN asset_id text,
  ADD COLUMN source text NOT NULL DEFAULT 'api' CHECK (source IN ('api', 'resolver')),
  ADD COLUMN status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'confirmed', 'dismissed')),
  ADD COLUMN decided_at timestamptz,
  ADD COLUMN decided_by_key text,
  ADD COLUMN decision_reason text;
-- Reports from the page were already stored against the owner. Reports made with an API key before
-- this named no owner: they stay out of every queue (owner unknown) and block nothing.
UPDATE code_reports
   SET owner_account_id = reporter_account_id, reporter_account_id = NULL, source = 'resolver'
 WHERE reported_by_key = 'public-resolver';
-- The queue, newest first, by status.
CREATE INDEX code_reports_queue ON code_reports (owner_account_id, environment, reported_at DESC, report_id DESC);
-- A code's block: its owner's confirmed report (read when the cache says the code was reported).
CREATE INDEX code_reports_confirmed ON code_reports (environment, gtin, serial) WHERE status = 'confirmed';
