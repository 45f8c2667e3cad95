-- GET /blocklist?createdBy=<key id>: the blocks one API key made, newest first (after a key leaks, what
-- to remove), without reading the account's other blocks.
CREATE INDEX code_blocklist_by_creator ON code_blocklist (account_id, environment, created_by_key, created_at DESC, block_id DESC);
