-- The key that replaced an API key by a rotation (POST /keys/{id}/rotate), written with the old key's
-- shortened expiry. A key is replaced once: a second rotation of it during its grace period is
-- refused (409 CONFLICT, naming the replacement) rather than making a second replacement whose
-- lifetime would be read off the expiry the first rotation shortened (a key with no expiry got a
-- replacement that expired with the grace). NULL: never rotated, or rotated before this column.
ALTER TABLE api_keys ADD COLUMN replaced_by text;
