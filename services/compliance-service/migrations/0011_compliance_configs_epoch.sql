-- A compliance config change moves the `compliance_configs` cache epoch (accounts migration 0017) in
-- its own transaction, so every replica that keeps configs reads the account's again within a poll,
-- its broadcast heard or not (packages/compliance-client).
CREATE TRIGGER compliance_configs_bump_cache_epoch AFTER INSERT OR UPDATE OR DELETE ON compliance_configs
  FOR EACH STATEMENT EXECUTE FUNCTION bump_named_cache_epoch('compliance_configs');
