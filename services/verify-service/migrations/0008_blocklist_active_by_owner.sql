-- A block change reads again its owner's active blocks (handlers/blocklist-cache.ts): this index
-- holds those only, so the read does not grow with the owner's removed blocks (a tenant toggling a
-- block adds a removed row each time).
CREATE INDEX code_blocklist_active_by_owner ON code_blocklist (account_id, environment) WHERE removed_at IS NULL;
