-- A code's signing key id in its link form (issue #19, storage per code; docs/ARCHITECTURE.md, "What
-- is stored per code"). Every code a code-service signs with one key, for one resolver origin and
-- link order, shares a form that now names the key too, so a row leaves out its key id (43
-- characters, 44 bytes a row) as it left out its link (0009). `kid` stays for rows written before,
-- for rows whose form names no key (written while a code-service of the release before was
-- connected: runtime's release-gates.ts), and for a code whose form names another key (none is made so).
ALTER TABLE code_link_forms ADD COLUMN kid text;
ALTER TABLE code_link_forms DROP CONSTRAINT code_link_forms_origin_link_order_key;
ALTER TABLE code_link_forms ADD CONSTRAINT code_link_forms_origin_link_order_kid_key UNIQUE NULLS NOT DISTINCT (origin, link_order, kid);
ALTER TABLE codes ALTER COLUMN kid DROP NOT NULL;
ALTER TABLE codes ADD CONSTRAINT codes_kid_or_link_form CHECK (kid IS NOT NULL OR link_form IS NOT NULL);
