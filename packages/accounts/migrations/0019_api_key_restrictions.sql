-- The GTINs an API key is restricted to (POST /keys `restrictions`; spec, Authentication 7), each a
-- GTIN-14, sorted. NULL: the key is not restricted (every key made before this column).
ALTER TABLE api_keys ADD COLUMN restricted_gtins text[];
