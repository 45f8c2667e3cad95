-- GTIN ownership (docs/SIGNING.md, "Who may sign") came after codes. Existing codes stay valid:
-- a GTIN whose codes were all made by one tenant becomes that tenant's (live when any of them is
-- live); codes of the operator need no claim (it signs every GTIN nobody owns). A GTIN with codes
-- of several accounts is left unowned and listed here for the operator to settle
-- (`hallmark gtins conflicts`, then `hallmark gtins grant`): until then only the operator's codes
-- of it verify, since no tenant can be trusted to own it over another.
CREATE TABLE gtin_ownership_conflicts (
  gtin text PRIMARY KEY,
  account_ids text[] NOT NULL,
  codes bigint NOT NULL,
  found_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

INSERT INTO gtin_ownership_conflicts (gtin, account_ids, codes)
SELECT gtin, array_agg(DISTINCT account_id ORDER BY account_id), count(*)
FROM codes GROUP BY gtin HAVING count(DISTINCT account_id) > 1;

INSERT INTO gtin_claims (id, account_id, environment, kind, value, source, created_by)
SELECT 'gtc_' || substr(md5('migrated:' || c.gtin), 1, 20), min(c.account_id),
       CASE WHEN bool_or(c.environment = 'live') THEN 'live' ELSE 'test' END, 'gtin', c.gtin, 'migrated', 'migration'
FROM codes c
WHERE NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = c.account_id AND a.is_operator)
GROUP BY c.gtin
HAVING count(DISTINCT c.account_id) = 1
   AND NOT EXISTS (SELECT 1 FROM gtin_ownership_conflicts x WHERE x.gtin = c.gtin);
