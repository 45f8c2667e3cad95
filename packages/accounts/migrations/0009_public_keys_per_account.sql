-- A registered public key belongs to the account and environment that registered it, not to the
-- whole product. Until now a row's id (the key's RFC 7638 thumbprint, its kid) was the table's
-- primary key: whoever registered a public key first held it everywhere. Public keys are public,
-- so another account could register a brand's key before the brand did (its own registration then
-- answered 409 for ever and its codes verified COUNTERFEIT), and one account could not register
-- its key in both environments. Now:
--
-- - A row is one key of one account in one environment: the primary key is (id, account_id,
--   environment), so an account may register the same key in test and in live, and a revoked
--   registration is made active again by registering the key again (packages/accounts/src/keyring.ts).
-- - Every registration carries a proof that the registrant holds the private key, kept here
--   (`proof`: the key's Ed25519 signature over its registration message,
--   packages/crypto/src/key-registration.ts). Rows from before have none (NULL) and stay as they
--   were; a row without a proof of another account does not keep anyone from registering the key
--   with a proof. Signing keys have none either: the service made them.
-- - A signing key's id stays unique across the product (the service makes them at random).
--
-- Lookups by kid alone (`WHERE id = $1`) still use the primary key's index, whose first column is id.
ALTER TABLE verification_keys ADD COLUMN proof text;
ALTER TABLE verification_keys DROP CONSTRAINT verification_keys_pkey;
ALTER TABLE verification_keys ADD PRIMARY KEY (id, account_id, environment);
CREATE UNIQUE INDEX one_row_per_signing_key ON verification_keys (id) WHERE type = 'signing';
