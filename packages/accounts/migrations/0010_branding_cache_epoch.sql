-- Verify-service remembers each GTIN's issuer as the public resolver page names it (its owner's
-- name, colours and logo; packages/accounts/src/gtin-issuers.ts) instead of asking the database on
-- every scan. A branding change bumps its own epoch, as a claim bumps `gtin_claims`, so a replica
-- whose broadcast was lost drops what it remembered within one poll (migration 0004).
ALTER TABLE cache_epochs DROP CONSTRAINT cache_epochs_name_check;
ALTER TABLE cache_epochs ADD CONSTRAINT cache_epochs_name_check
  CHECK (name IN ('api_keys', 'verification_keys', 'gtin_claims', 'account_branding'));
INSERT INTO cache_epochs (name, value) VALUES ('account_branding', 1) ON CONFLICT (name) DO NOTHING;

CREATE TRIGGER account_branding_bump_cache_epoch AFTER INSERT OR UPDATE OR DELETE ON account_branding
  FOR EACH STATEMENT EXECUTE FUNCTION bump_cache_epoch();
