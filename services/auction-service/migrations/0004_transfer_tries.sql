-- A transfer takes at most five codes, however many confirms arrive at once: each confirm takes one
-- of its tries here, in one statement, before its code's comparison counts for anything (a right
-- code that does not complete the transfer gives its try back). `attempts` stays the wrong codes
-- counted, which lock the transfer at five (docs/AUCTION.md, Transfers).
ALTER TABLE auction_transfers ADD COLUMN tries integer NOT NULL DEFAULT 0;
UPDATE auction_transfers SET tries = attempts;
