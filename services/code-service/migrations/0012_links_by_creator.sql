-- The links one API key made, newest first: GET /links?createdBy=<key id> and DELETE /links?createdBy=
-- (after a key leaks, what to remove) and the count of a restricted key's links (its limit), without
-- reading the account's other links (up to 100,000).
CREATE INDEX item_links_by_creator ON item_links (account_id, environment, created_by, created_at DESC, id DESC)
  WHERE created_by IS NOT NULL;
