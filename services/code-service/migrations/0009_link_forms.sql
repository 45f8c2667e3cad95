-- A code's link without its text (issue #19, storage per code; docs/ARCHITECTURE.md, "What is stored
-- per code"). A link is the resolver's origin and the code's own fields (GTIN, serial, batch, expiry,
-- signature) written in one order: every code a code-service makes with one origin and order shares
-- that form, so a row names its form (4 bytes) and its link is written again when read, instead of
-- holding the ~150 bytes of it (most of them a second copy of the signature). The link stays whole
-- in the code's event. `url` stays for rows written before, and for a code whose link the form does
-- not give back exactly (none is made so; code-service compares before it leaves the text out).
-- No foreign key: it would cost a look-up per inserted code, and forms are never deleted.
CREATE TABLE code_link_forms (
  id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  origin text NOT NULL,
  link_order text NOT NULL CHECK (link_order IN ('spec', 'gs1')),
  UNIQUE (origin, link_order)
);
ALTER TABLE codes ALTER COLUMN url DROP NOT NULL;
ALTER TABLE codes ADD COLUMN link_form integer;
ALTER TABLE codes ADD CONSTRAINT codes_url_or_link_form CHECK (url IS NOT NULL OR link_form IS NOT NULL);
