-- Most assets are generated codes, whose tree has one leaf (their `code.generated` event). In a
-- one-leaf tree the leaf is the root, and the event's place is leaf 0: its merkle_nodes row (0, 0)
-- repeated root_hash and its provenance_events row repeated what "the asset's first event" says.
-- The asset row now names its first event itself, and a one-leaf tree keeps its leaf only as
-- root_hash; node (0, 0) is written when the tree grows past one leaf. Leaf 0's place stays unique
-- through the asset row's key, every later leaf's through merkle_nodes' key (0003).
ALTER TABLE provenance_assets ADD COLUMN first_event_id uuid;

UPDATE provenance_assets AS a SET first_event_id = e.event_id::uuid
FROM provenance_events AS e
WHERE e.asset_id = a.asset_id AND e.leaf_index = 0;

DELETE FROM provenance_events WHERE leaf_index = 0;

DELETE FROM merkle_nodes AS n
USING provenance_assets AS a
WHERE n.asset_id = a.asset_id AND a.tree_size = 1 AND n.level = 0 AND n.idx = 0;
