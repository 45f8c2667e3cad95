-- Every replica caches keys and GTIN claims in memory. A change to one of these tables bumps its
-- epoch here, in the changing transaction (a trigger, so no writer, the CLI included, can forget):
-- replicas poll the epochs (packages/accounts/src/cache-epochs.ts) and treat every cache entry
-- loaded under an older epoch as gone. Broadcasts remain the fast path; the epochs make a lost
-- broadcast cost at most one poll interval, and a load that raced a change is never kept.
CREATE TABLE cache_epochs (
  name text PRIMARY KEY CHECK (name IN ('api_keys', 'verification_keys', 'gtin_claims')),
  value bigint NOT NULL
);
INSERT INTO cache_epochs (name, value) VALUES ('api_keys', 1), ('verification_keys', 1), ('gtin_claims', 1);

-- SECURITY DEFINER: the services' own roles (infra/postgres/roles.sql) only read the epochs.
CREATE FUNCTION bump_cache_epoch() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
  UPDATE cache_epochs SET value = value + 1 WHERE name = TG_TABLE_NAME;
  RETURN NULL;
END;
$$;

-- A new API key needs no bump: nothing can have cached a secret nobody had (unknown hashes are
-- remembered only briefly, and a bootstrap key is stored before its gateway answers).
CREATE TRIGGER api_keys_bump_cache_epoch AFTER UPDATE OR DELETE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION bump_cache_epoch();
CREATE TRIGGER verification_keys_bump_cache_epoch AFTER INSERT OR UPDATE OR DELETE ON verification_keys
  FOR EACH STATEMENT EXECUTE FUNCTION bump_cache_epoch();
CREATE TRIGGER gtin_claims_bump_cache_epoch AFTER INSERT OR UPDATE OR DELETE ON gtin_claims
  FOR EACH STATEMENT EXECUTE FUNCTION bump_cache_epoch();
