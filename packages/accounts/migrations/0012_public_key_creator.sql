-- The API key that registered a public key (POST /keys with a publicKey), as api_keys.created_by is
-- the key that made an API key: after a key leaks, `GET /keys?createdBy=<its id>` lists the public
-- keys it registered too, to revoke them. NULL: a signing key (the service's), or a public key
-- registered before this column.
ALTER TABLE verification_keys ADD COLUMN created_by text;
