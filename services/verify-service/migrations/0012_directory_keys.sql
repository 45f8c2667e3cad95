-- A directory row's signing key id by number (issue #19, storage per code; docs/ARCHITECTURE.md,
-- "What is stored per code"): the codes of one key share its id (43 characters, 44 bytes a row),
-- kept once here; a row names its number (4 bytes). `kid` stays for rows written before, and for
-- rows written while a verify-service of the release before (which reads `kid` only) was connected
-- (runtime's release-gates.ts). No foreign key: numbers are never deleted, and a look-up per
-- projected row would cost more than it checks.
CREATE TABLE directory_keys (
  id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  kid text NOT NULL UNIQUE
);
ALTER TABLE code_directory ALTER COLUMN kid DROP NOT NULL;
ALTER TABLE code_directory ADD COLUMN key_id integer;
ALTER TABLE code_directory ADD CONSTRAINT code_directory_kid_or_key_id CHECK (kid IS NOT NULL OR key_id IS NOT NULL);
