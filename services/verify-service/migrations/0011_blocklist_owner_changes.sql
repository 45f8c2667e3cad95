-- Each owner's blocklist changes, counted in the changing transaction by triggers (so no writer,
-- an operator's SQL included, can forget), with the `code_blocklist` cache epoch (accounts migration
-- 0016) moved beside them: a replica that sees the epoch move reads these counts and reads again the
-- blocks of the owners whose count moved (handlers/blocklist-cache.ts), as the broadcast it may
-- have missed would have had it do.
CREATE TABLE blocklist_owner_changes (
  account_id text NOT NULL,
  environment text NOT NULL,
  changes bigint NOT NULL,
  PRIMARY KEY (account_id, environment)
);

-- SECURITY DEFINER, as the epochs' own functions: the service's role only reads the counts and epochs.
CREATE FUNCTION count_blocklist_changes() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO blocklist_owner_changes AS counted (account_id, environment, changes)
    SELECT DISTINCT account_id, environment, 1 FROM changed_blocks
    ON CONFLICT (account_id, environment) DO UPDATE SET changes = counted.changes + 1;
  UPDATE cache_epochs SET value = value + 1 WHERE name = 'code_blocklist';
  RETURN NULL;
END;
$$;

-- (A trigger with a transition table fires for one kind of change only: three.)
CREATE TRIGGER code_blocklist_added AFTER INSERT ON code_blocklist
  REFERENCING NEW TABLE AS changed_blocks FOR EACH STATEMENT EXECUTE FUNCTION count_blocklist_changes();
CREATE TRIGGER code_blocklist_changed AFTER UPDATE ON code_blocklist
  REFERENCING NEW TABLE AS changed_blocks FOR EACH STATEMENT EXECUTE FUNCTION count_blocklist_changes();
CREATE TRIGGER code_blocklist_deleted AFTER DELETE ON code_blocklist
  REFERENCING OLD TABLE AS changed_blocks FOR EACH STATEMENT EXECUTE FUNCTION count_blocklist_changes();
