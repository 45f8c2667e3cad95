-- How many blocks each account has active, per environment: the blocklist is read whole into every
-- verify-service replica's memory and read again on each change, so an account may keep at most
-- HALLMARK_MAX_ACTIVE_BLOCKS active (docs/API.md, "Blocklist"). A block takes its place by updating
-- this row in the block's transaction, under the cap, so two requests at once cannot both take the
-- last place; a removal gives it back in its own transaction.
CREATE TABLE blocklist_active_counts (
  account_id text NOT NULL,
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  active integer NOT NULL CHECK (active >= 0),
  PRIMARY KEY (account_id, environment)
);

INSERT INTO blocklist_active_counts (account_id, environment, active)
SELECT account_id, environment, count(*) FROM code_blocklist WHERE removed_at IS NULL GROUP BY account_id, environment;
