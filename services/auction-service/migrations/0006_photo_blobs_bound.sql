-- A photo's SHA-256 is recorded before its `photographed` event (so a blob being bound is never
-- removed under it), and marked bound in the event's transaction. An upload refused after it was
-- recorded (a race lost, then refused on deciding again; the storage limit's second check) removes
-- the record it made while unbound, and so its blob: before, the record stayed and kept the blob,
-- uncounted, on the shared store, every time (docs/AUCTION.md, Photos). Rows recorded before are
-- taken as bound: they keep their blobs, as they did.
ALTER TABLE auction_photo_blobs ADD COLUMN bound_at timestamptz;
UPDATE auction_photo_blobs SET bound_at = recorded_at;
