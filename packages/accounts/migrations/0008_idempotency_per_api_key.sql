-- An Idempotency-Key and its stored answer belong to the API key that sent it (a console session:
-- the key it signed in with), not to the whole account: the answer can hold a secret shown once (a
-- new API key's secret, a transfer code), and a replay is answered before the route's own checks, so
-- a narrower key of the account that sent a stronger key's Idempotency-Key again was handed that
-- answer. Another key with the same Idempotency-Key now has a key space of its own.
--
-- Rows from before carry no key id: they get '' and no request matches them any more (every
-- authenticated key has an id, and their answers were sealed without one, so they could not be
-- opened either). They lapse within 24 h of their first attempt and the gateway sweeps them; a
-- retry that would have been replayed from one runs again instead (and, since the hash services
-- derive ids from now holds the key id too, one whose answer was lost just before makes its resource
-- again). The default keeps inserts from a gateway of the previous version, still running during a
-- rolling update, valid.
ALTER TABLE idempotent_requests ADD COLUMN api_key_id text NOT NULL DEFAULT '';
ALTER TABLE idempotent_requests DROP CONSTRAINT idempotent_requests_pkey;
ALTER TABLE idempotent_requests ADD PRIMARY KEY (account_id, environment, api_key_id, operation, key_hash);
