-- The owner of a code may lift the block of a confirmed report of it (a confirmation made in error):
-- the report becomes `lifted`, keeping its confirmation (decided_at, decision_reason) beside the
-- lift. The code's block was its confirmed reports (code_reports_confirmed): a lifted one drops out.
ALTER TABLE code_reports DROP CONSTRAINT IF EXISTS code_reports_status_check;
ALTER TABLE code_reports
  ADD CONSTRAINT code_reports_status_check CHECK (status IN ('pending', 'confirmed', 'dismissed', 'lifted')),
  ADD COLUMN lifted_at timestamptz,
  ADD COLUMN lifted_by_key text,
  ADD COLUMN lift_reason text;
