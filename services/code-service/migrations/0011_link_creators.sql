-- The API key that made a link and the one that changed it last (POST and PATCH /links), as webhook
-- endpoints keep theirs: after a key leaks, `GET /links?createdBy=` and `?changedBy=` find the links it
-- pointed at a site of its own. NULL for links made before this column.
ALTER TABLE item_links ADD COLUMN created_by text;
ALTER TABLE item_links ADD COLUMN changed_by text;
