-- GET /api/v1/codes (docs/API.md, "Listing codes"): an account's codes newest first, keyset-paged on
-- (created_at, asset_id), filtered by GTIN, serial or batch. Each filter has an index that yields its
-- rows already in page order, so a page reads about `limit` index entries however many codes the
-- account has and however deep the page (a serial matches a few codes at most: they are sorted).
-- Measured at 1.2 million codes (PostgreSQL 15): any first or
-- deep page 0.1-0.3 ms; about 310 bytes of index per code for the four. Built in the migration's
-- transaction: on a large table this holds writes to `codes` while it runs (about 10 s for the four
-- at a million codes).
CREATE INDEX codes_by_owner ON codes (account_id, environment, created_at DESC, asset_id DESC);
CREATE INDEX codes_by_owner_gtin ON codes (account_id, environment, gtin, created_at DESC, asset_id DESC);
CREATE INDEX codes_by_owner_batch ON codes (account_id, environment, batch, created_at DESC, asset_id DESC) WHERE batch IS NOT NULL;
CREATE INDEX codes_by_owner_serial ON codes (account_id, environment, serial);
