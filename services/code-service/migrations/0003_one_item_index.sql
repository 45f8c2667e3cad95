-- One index for both jobs: the owner's uniqueness of an item and the look-up of an item's codes
-- across owners (verification), which reads its leading (environment, gtin, serial). It was two
-- indexes, and every generated code paid an insert into each.
ALTER TABLE codes DROP CONSTRAINT codes_account_id_environment_gtin_serial_key;
ALTER TABLE codes ADD CONSTRAINT codes_item_owner_key UNIQUE (environment, gtin, serial, account_id);
DROP INDEX codes_by_item;
