-- A claim made and a claim ended bump different epochs (packages/accounts/src/gtin-cache.ts).
-- Every auction object's registration makes a claim on its GTIN, and the one `gtin_claims` epoch
-- it bumped made every replica drop every tenant's cached signers, issuers and codes. A new claim
-- cannot take a GTIN someone owns without ending that claim (an UPDATE, which still bumps
-- `gtin_claims`), so only what was remembered of GTINs nobody owned needs to go when one is made:
-- caches check `gtin_claims_added` for those alone.
ALTER TABLE cache_epochs DROP CONSTRAINT cache_epochs_name_check;
ALTER TABLE cache_epochs ADD CONSTRAINT cache_epochs_name_check
  CHECK (name IN ('api_keys', 'verification_keys', 'gtin_claims', 'gtin_claims_added', 'account_branding'));
INSERT INTO cache_epochs (name, value) VALUES ('gtin_claims_added', 1) ON CONFLICT (name) DO NOTHING;

-- SECURITY DEFINER as bump_cache_epoch (0004): the services' roles only read the epochs.
CREATE FUNCTION bump_named_cache_epoch() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
  UPDATE cache_epochs SET value = value + 1 WHERE name = TG_ARGV[0];
  RETURN NULL;
END;
$$;

DROP TRIGGER gtin_claims_bump_cache_epoch ON gtin_claims;
CREATE TRIGGER gtin_claims_bump_cache_epoch AFTER UPDATE OR DELETE ON gtin_claims
  FOR EACH STATEMENT EXECUTE FUNCTION bump_cache_epoch();
CREATE TRIGGER gtin_claims_added_bump_cache_epoch AFTER INSERT ON gtin_claims
  FOR EACH STATEMENT EXECUTE FUNCTION bump_named_cache_epoch('gtin_claims_added');
