-- The hourly scan counts in whole UTC hours (scan-history.ts). They were truncated in the database
-- session's TimeZone, which nothing set: on a server or database whose zone has a half-hour offset
-- (Asia/Kolkata, America/St_Johns, Australia/Adelaide; initdb takes the machine's zone) every hour
-- started at :30 UTC and held the halves of two. The counts of an account with such an hour are
-- counted again from its scans, as the projection counts them now (a country only from the owner's
-- own keys); every other account's are left as they are (a whole UTC hour was counted right).
CREATE TEMPORARY TABLE hourly_counts_recounted ON COMMIT DROP AS
  SELECT DISTINCT account_id, environment FROM scan_counts_hourly WHERE date_trunc('hour', hour, 'UTC') <> hour;
DELETE FROM scan_counts_hourly h USING hourly_counts_recounted a
 WHERE h.account_id = a.account_id AND h.environment = a.environment;
INSERT INTO scan_counts_hourly (account_id, environment, dimension, hour, value, count)
SELECT s.account_id, s.environment, 'verdict', date_trunc('hour', s.scanned_at, 'UTC'), s.verdict, count(*)
  FROM scans s JOIN hourly_counts_recounted a ON a.account_id = s.account_id AND a.environment = s.environment
 GROUP BY 1, 2, 4, 5;
INSERT INTO scan_counts_hourly (account_id, environment, dimension, hour, value, count)
SELECT s.account_id, s.environment, 'flag', date_trunc('hour', s.scanned_at, 'UTC'), flag, count(*)
  FROM scans s JOIN hourly_counts_recounted a ON a.account_id = s.account_id AND a.environment = s.environment,
       unnest(s.risk_indicators) AS flag
 GROUP BY 1, 2, 4, 5;
INSERT INTO scan_counts_hourly (account_id, environment, dimension, hour, value, count)
SELECT s.account_id, s.environment, 'country', date_trunc('hour', s.scanned_at, 'UTC'), s.country, count(*)
  FROM scans s JOIN hourly_counts_recounted a ON a.account_id = s.account_id AND a.environment = s.environment
 WHERE s.country IS NOT NULL AND s.verified_by = s.account_id
 GROUP BY 1, 2, 4, 5;
