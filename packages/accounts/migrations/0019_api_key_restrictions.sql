-- The GTINs an API key is restricted to (POST /keys `restrictions`; spec, Authentication 7), each a
-- GTIN-14, sorted. NULL: the key is not restricted (every key made before this column). Never empty:
-- a key restricted to nothing is no key the API makes.
ALTER TABLE api_keys ADD COLUMN restricted_gtins text[]
  CHECK (restricted_gtins IS NULL OR cardinality(restricted_gtins) BETWEEN 1 AND 100);
