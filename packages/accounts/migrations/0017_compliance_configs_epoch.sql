-- verify-service (the risk thresholds a verification applies) and auction-service (the evidence a
-- provenance event needs) keep each account's compliance config for a minute, dropped at once on the
-- `compliance.config-changed` broadcast. One lost left a replica applying the config as it was, a
-- threshold the brand had just lowered not applied, for up to that minute. A change bumps this epoch
-- (compliance-service migration 0011), and a copy read under an older epoch is read again.
ALTER TABLE cache_epochs DROP CONSTRAINT cache_epochs_name_check;
ALTER TABLE cache_epochs ADD CONSTRAINT cache_epochs_name_check
  CHECK (name IN ('api_keys', 'verification_keys', 'gtin_claims', 'gtin_claims_added', 'account_branding', 'code_blocks',
                  'code_blocklist', 'compliance_configs'));
INSERT INTO cache_epochs (name, value) VALUES ('compliance_configs', 1) ON CONFLICT (name) DO NOTHING;
