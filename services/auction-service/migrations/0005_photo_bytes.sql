-- Bytes of every photo bound to the object, replaced ones included (their blobs are kept): an
-- account's photos in an environment are held to HALLMARK_PHOTO_BYTES_PER_ACCOUNT (docs/AUCTION.md,
-- Photos). NULL until counted: objects registered before are counted from the event store once, at
-- start (store/photo-storage.ts).
ALTER TABLE auction_objects ADD COLUMN photo_bytes bigint;
CREATE INDEX auction_objects_photo_bytes ON auction_objects (account_id, environment) INCLUDE (photo_bytes)
  WHERE photo_bytes > 0;
