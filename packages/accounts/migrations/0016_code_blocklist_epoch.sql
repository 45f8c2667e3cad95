-- verify-service's blocklist, held by every replica (handlers/blocklist-cache.ts), is read again per
-- owner on the `codes.blocklist-changed` broadcast; one lost (a process killed after its commit, a
-- message dropped while NATS reconnected) left a replica answering AUTHENTIC for a code its owner had
-- blocked as counterfeit until its 30 s re-read. A change bumps this epoch and its owner's change
-- count (verify-service migration 0011), so a replica that sees the epoch move reads again the
-- blocks of the owners whose count moved, and only theirs.
ALTER TABLE cache_epochs DROP CONSTRAINT cache_epochs_name_check;
ALTER TABLE cache_epochs ADD CONSTRAINT cache_epochs_name_check
  CHECK (name IN ('api_keys', 'verification_keys', 'gtin_claims', 'gtin_claims_added', 'account_branding', 'code_blocks',
                  'code_blocklist'));
INSERT INTO cache_epochs (name, value) VALUES ('code_blocklist', 1) ON CONFLICT (name) DO NOTHING;
