-- An event's place is unique already through merkle_nodes' key (asset, level 0, index); the second
-- unique index on (asset_id, leaf_index) cost every projected event one more index insert.
ALTER TABLE provenance_events DROP CONSTRAINT provenance_events_asset_id_leaf_index_key;
