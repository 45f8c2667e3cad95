-- Transfers are decided on the object's stream (src/domain/transfer.ts): the stream, not this
-- table, allows one open transfer per object, and an expired or locked one no longer holds it.
-- A row keeps what must stay out of the public history (the code's HMAC, the wrong attempts) and
-- mirrors the transfer's status: pending, completed, locked, expired ('completing' is no longer
-- written; such a row left by a cut-off confirm is pending again on its next confirm).
DROP INDEX auction_transfers_open;
CREATE INDEX auction_transfers_object ON auction_transfers (object_id);
