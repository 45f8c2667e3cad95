-- One index for three jobs (issue #19, storage per code and the embedded form's inserts): an owner's
-- uniqueness of an item (the insert's ON CONFLICT, which finds a unique index by its set of columns,
-- in any order), the signer's codes of an item (findCodes, which now asks for the signer's alone:
-- it answered no other), and the listing by serial (GET /codes?serial=, which reads the owner's
-- codes of that serial, one per GTIN at most, and sorts them). Those were two indexes,
-- `codes_item_owner_key` (environment, gtin, serial, account_id) and `codes_by_owner_serial`
-- (account_id, environment, serial): every generated code paid an entry in each, about 96 bytes for
-- the second at 100,000 codes. A code-service of the release before, still running during a rolling
-- upgrade, looks an item up by (environment, gtin, serial) without the account: it reads this
-- index's entries of that serial in the environment, every owner's and every GTIN's (thousands for a
-- serial such as "1" numbered afresh for each GTIN), slower but answered, until it is replaced.
-- Built in the migration's transaction, as 0007's were: on a large table this holds writes to
-- `codes` while it runs.
CREATE UNIQUE INDEX codes_item_owner ON codes (environment, serial, account_id, gtin);
ALTER TABLE codes DROP CONSTRAINT codes_item_owner_key;
ALTER TABLE codes ADD CONSTRAINT codes_item_owner_key UNIQUE USING INDEX codes_item_owner;
DROP INDEX codes_by_owner_serial;
