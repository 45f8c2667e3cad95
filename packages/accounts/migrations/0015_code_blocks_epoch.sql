-- Every verify-service replica holds the codes their owners blocked by confirming a report
-- (services/verify-service/src/handlers/report-code.ts, createCodeBlocks), told of each decision by
-- a broadcast sent after its commit. A replica that never heard one (the deciding process killed
-- between its commit and the broadcast, a message lost on the way) answered AUTHENTIC for a
-- confirmed counterfeit until its 30 s re-read. A decision bumps this epoch in its own transaction
-- (the trigger is verify-service's migration 0010), and a replica that sees it move reads its
-- blocks again: a lost broadcast costs one poll, as for keys and claims (migration 0004).
ALTER TABLE cache_epochs DROP CONSTRAINT cache_epochs_name_check;
ALTER TABLE cache_epochs ADD CONSTRAINT cache_epochs_name_check
  CHECK (name IN ('api_keys', 'verification_keys', 'gtin_claims', 'gtin_claims_added', 'account_branding', 'code_blocks'));
INSERT INTO cache_epochs (name, value) VALUES ('code_blocks', 1) ON CONFLICT (name) DO NOTHING;
