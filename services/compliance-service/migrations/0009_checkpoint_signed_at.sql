-- The latest time a checkpoint of the asset was signed with: a checkpoint is never dated before
-- one signed already, so a clock stepped back cannot date a larger tree earlier than a smaller one
-- (an auditor asking for the history as of a time would take the smaller as complete). Null until
-- the first checkpoint; instant to add, and the release before ignores it.
ALTER TABLE provenance_assets ADD COLUMN checkpoint_signed_at timestamptz;
