-- Which API key made each endpoint, and which last changed it (its URL, event types, description,
-- status or secret): after a key leaks, its owner finds the endpoints the key made or pointed
-- elsewhere (GET /webhooks/endpoints?createdBy=, ?changedBy=) and removes them, as the key's own
-- keys are found with GET /keys?createdBy=. Null for endpoints made before this migration, and for
-- changes made by the delivery worker (an endpoint disabled as gone or failing).
ALTER TABLE webhook_endpoints ADD COLUMN created_by text, ADD COLUMN changed_by text;
