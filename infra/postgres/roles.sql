-- One PostgreSQL role per service: each may touch only its own tables, the event store and what it
-- needs of the accounts tables (docs/ARCHITECTURE.md, "PostgreSQL roles"). Apply it with psql as the
-- owner of the tables (the role that ran the migrations), after the migrations and again after any
-- release that adds a table:
--
--   HALLMARK_DATABASE_URL="$OWNER_DATABASE_URL" hallmark migrate --roles infra/postgres/roles.sql
--     (both steps in one; in Kubernetes the Job hallmark-migrate runs it on every release), or
--   psql "$OWNER_DATABASE_URL" -v ON_ERROR_STOP=1 -f infra/postgres/roles.sql   (after hallmark migrate)
--   psql "$OWNER_DATABASE_URL" -c "ALTER ROLE hallmark_gateway PASSWORD '…'"   -- and so for each role
--
-- then give each service its own HALLMARK_DATABASE_URL (postgres://hallmark_gateway:…@host/hallmark).
-- The services read schema_migrations at start and apply nothing when every migration is there; a
-- release with a new migration must be migrated with the owner's URL first (a service role cannot
-- create tables). infra/postgres/roles.int.test.ts applies this file to a database of its own and
-- checks that each role is refused another service's tables, and that every table of the
-- migrations is granted here.
--
-- Who needs what (from each module's migrations and the queries in its code):
--   event store (events, event_packs, packed_streams, event_checkpoints, the event_log view;
--     packages/event-store): code-, verify-,
--     auction- and compliance-service append and subscribe; the gateway appends the accounts' and
--     keys' events (account.created, key.issued, key.revoked) and subscribes to nothing.
--   accounts (accounts, api_keys, verification_keys, gtin_claims; packages/accounts):
--     gateway       authentication and /accounts, /keys, the JWKS: reads and writes accounts and
--                   api_keys, registers and revokes public keys, reads GTIN claims.
--     code-service  makes and rotates signing keys (verification_keys), owns the GTIN claims' writes.
--     auction-service signs with the account's key (made on first use), claims an object's GTIN.
--     compliance-service signs checkpoints with the account's key (made on first use).
--     verify-service reads keys and claims only.
--   idempotent_requests (accounts migrations): the gateway's idempotency records.
--   console_sessions (accounts migrations): the gateway's console sessions (docs/SECURITY.md).
--   api_key_last_used (accounts migrations): the gateway's record of each key's last use.
--   account_branding (accounts migrations): written by the gateway (/account/branding), read by verify-service.
--   cache_epochs (accounts migrations): read by every service, bumped by triggers (packages/accounts/src/cache-epochs.ts).
--   code-service: codes, metadata_schemas, metadata_schema_versions, gtin_ownership_conflicts,
--     item_links (the brand's links the resolver serves).
--   verify-service: code_reports, scans, code_directory, directory_keys, verify_projection_checkpoints, the scans'
--     rollups (scan_counts_hourly, scan_code_days), code_blocklist, blocklist_active_counts, block_chunks
--     (a bulk file's chunks kept under their Idempotency-Key) and blocklist_owner_changes (read only: its
--     trigger counts).
--   auction-service: auction_objects, auction_transfers, auction_photo_blobs, auction_photo_blobs_backfill.
--   compliance-service: merkle_nodes, provenance_events, provenance_assets, projection_checkpoints,
--     compliance_configs (a rebuild truncates the first three), checkpoint_clock; webhook_endpoints, webhook_messages,
--     webhook_attempts, webhook_checkpoints, webhook_thresholds, webhook_deliveries_in_flight
--     (docs/WEBHOOKS.md). For webhooks it also reads some columns of api_keys (key.expiring).
-- Not narrowed: verification_keys is granted by table, so the gateway and verify-service can read
-- the sealed private keys (sealed under HALLMARK_MASTER_KEY, which they do not hold): the key store
-- selects whole rows (SELECT *), which column grants would refuse.

DO $$
DECLARE
  role_name text;
BEGIN
  FOREACH role_name IN ARRAY ARRAY['hallmark_gateway', 'hallmark_code_service', 'hallmark_verify_service',
                                   'hallmark_auction_service', 'hallmark_compliance_service'] LOOP
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = role_name) THEN
      EXECUTE format('CREATE ROLE %I LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT', role_name);
    END IF;
    EXECUTE format('GRANT CONNECT ON DATABASE %I TO %I', current_database(), role_name);
  END LOOP;
END
$$;

-- Nobody but the owner creates objects or reads a table by default.
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public
  TO hallmark_gateway, hallmark_code_service, hallmark_verify_service, hallmark_auction_service, hallmark_compliance_service;

-- Every service checks at start that its migrations are applied.
GRANT SELECT ON schema_migrations
  TO hallmark_gateway, hallmark_code_service, hallmark_verify_service, hallmark_auction_service, hallmark_compliance_service;
GRANT SELECT ON installation
  TO hallmark_gateway, hallmark_code_service, hallmark_verify_service, hallmark_auction_service, hallmark_compliance_service;

-- The event store: appends (events; a stream's version is its last event's) and subscriptions'
-- checkpoints. Events are never updated or deleted.
GRANT SELECT, INSERT ON events
  TO hallmark_gateway, hallmark_code_service, hallmark_verify_service, hallmark_auction_service, hallmark_compliance_service;
-- Packed first events (code-service starts streams in packs; every reader reads them), and
-- every event as a row (event_log, a view over both, for ad-hoc queries).
GRANT SELECT, INSERT ON event_packs, packed_streams
  TO hallmark_gateway, hallmark_code_service, hallmark_verify_service, hallmark_auction_service, hallmark_compliance_service;
GRANT SELECT ON event_log
  TO hallmark_gateway, hallmark_code_service, hallmark_verify_service, hallmark_auction_service, hallmark_compliance_service;
GRANT USAGE ON SEQUENCE events_global_position_seq
  TO hallmark_gateway, hallmark_code_service, hallmark_verify_service, hallmark_auction_service, hallmark_compliance_service;
GRANT SELECT, INSERT, UPDATE ON event_checkpoints
  TO hallmark_gateway, hallmark_code_service, hallmark_verify_service, hallmark_auction_service, hallmark_compliance_service;

-- Accounts.
GRANT SELECT ON accounts
  TO hallmark_gateway, hallmark_code_service, hallmark_verify_service, hallmark_auction_service, hallmark_compliance_service;
GRANT INSERT, UPDATE ON accounts TO hallmark_gateway;
GRANT SELECT, INSERT, UPDATE ON api_keys TO hallmark_gateway;
GRANT SELECT ON verification_keys
  TO hallmark_gateway, hallmark_code_service, hallmark_verify_service, hallmark_auction_service, hallmark_compliance_service;
GRANT INSERT, UPDATE ON verification_keys
  TO hallmark_gateway, hallmark_code_service, hallmark_auction_service, hallmark_compliance_service;
GRANT SELECT ON gtin_claims
  TO hallmark_gateway, hallmark_code_service, hallmark_verify_service, hallmark_auction_service, hallmark_compliance_service;
GRANT INSERT, UPDATE ON gtin_claims TO hallmark_code_service, hallmark_auction_service;
GRANT SELECT, INSERT, UPDATE, DELETE ON idempotent_requests TO hallmark_gateway;
-- The web console's sessions (token hashes): the gateway signs in, checks, touches and signs out.
GRANT SELECT, INSERT, UPDATE, DELETE ON console_sessions TO hallmark_gateway;
-- When each API key was last used: written in batches by the gateways, read with the key listing.
GRANT SELECT, INSERT, UPDATE ON api_key_last_used TO hallmark_gateway;
-- The brand on the resolver page: set through the gateway, read by verify-service with a scan.
GRANT SELECT, INSERT, UPDATE ON account_branding TO hallmark_gateway;
GRANT SELECT ON account_branding TO hallmark_verify_service;
-- Bumped by SECURITY DEFINER triggers (on the tables above, and on code_reports and code_blocklist);
-- every replica polls them.
GRANT SELECT ON cache_epochs
  TO hallmark_gateway, hallmark_code_service, hallmark_verify_service, hallmark_auction_service, hallmark_compliance_service;

-- Each service's own tables.
GRANT SELECT, INSERT, UPDATE, DELETE ON codes, code_link_forms, metadata_schemas, metadata_schema_versions, gtin_ownership_conflicts, item_links
  TO hallmark_code_service;
-- A code-service inserts its link form once (code-service migration 0009); its id is an identity.
GRANT USAGE ON SEQUENCE code_link_forms_id_seq TO hallmark_code_service;
GRANT SELECT, INSERT, UPDATE, DELETE ON code_reports, scans, code_directory, directory_keys, verify_projection_checkpoints,
  scan_counts_hourly, scan_code_days, code_blocklist, blocklist_active_counts, block_chunks
  TO hallmark_verify_service;
-- The code directory's projection numbers each signing key id once (verify-service migration 0012).
GRANT USAGE ON SEQUENCE directory_keys_id_seq TO hallmark_verify_service;
-- Counted by a SECURITY DEFINER trigger on code_blocklist (verify-service migration 0011); read only.
GRANT SELECT ON blocklist_owner_changes TO hallmark_verify_service;
GRANT SELECT, INSERT, UPDATE, DELETE ON auction_objects, auction_transfers, auction_photo_blobs, auction_photo_blobs_backfill
  TO hallmark_auction_service;
GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE
  ON merkle_nodes, provenance_events, provenance_assets, projection_checkpoints, compliance_configs
  TO hallmark_compliance_service;
GRANT SELECT, UPDATE ON checkpoint_clock TO hallmark_compliance_service;
GRANT SELECT, INSERT, UPDATE, DELETE
  ON webhook_endpoints, webhook_messages, webhook_attempts, webhook_checkpoints, webhook_thresholds,
     webhook_deliveries_in_flight
  TO hallmark_compliance_service;
-- Webhooks' periodic check: keys about to expire (never their hashes).
GRANT SELECT (id, account_id, environment, name, expires_at, revoked_at) ON api_keys TO hallmark_compliance_service;
