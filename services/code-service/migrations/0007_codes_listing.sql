-- GET /api/v1/codes (docs/API.md, "Listing codes"): an account's codes newest first, keyset-paged on
-- (created_at, asset_id), filtered by GTIN, serial or batch. Each filter has an index that yields its
-- rows already in page order, so a page reads about `limit` index entries however many codes the
-- account has and however deep the page; GTIN and serial together use the item's unique index
-- (environment, gtin, serial, account_id). Built in the migration's transaction: on a large table
-- this holds writes to `codes` while it runs (about 2 s per million codes each, measured on PostgreSQL 16).
CREATE INDEX codes_by_owner ON codes (account_id, environment, created_at DESC, asset_id DESC);
CREATE INDEX codes_by_owner_gtin ON codes (account_id, environment, gtin, created_at DESC, asset_id DESC);
CREATE INDEX codes_by_owner_batch ON codes (account_id, environment, batch, created_at DESC, asset_id DESC) WHERE batch IS NOT NULL;
CREATE INDEX codes_by_owner_serial ON codes (account_id, environment, serial);
