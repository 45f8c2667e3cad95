-- Idempotency-Key moved to the gateway (services/gateway/src/idempotency.ts, table idempotent_requests of
-- the accounts migrations), for every route that creates something; nothing reads this table any more.
DROP TABLE IF EXISTS idempotency_keys;
