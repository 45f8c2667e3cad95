-- The SHA-256 of every photo recorded on any object (bound, or deciding to be bound): a refused
-- upload's blob is removed only when its SHA-256 is not here (docs/AUCTION.md, Photos).
CREATE TABLE auction_photo_blobs (
  sha256 text PRIMARY KEY,
  recorded_at timestamptz NOT NULL
);

-- One row once the photos recorded before auction_photo_blobs existed were copied into it.
CREATE TABLE auction_photo_blobs_backfill (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  done_at timestamptz NOT NULL
);
