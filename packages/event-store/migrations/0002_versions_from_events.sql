-- A stream's version is its last event's stream_version, read from the events' own unique index on
-- (stream_id, stream_version); that index is also what refuses a second writer of the same version.
-- The separate version row cost every stream (every generated code is one) a row and an index entry,
-- about 175 bytes, and every append one more write.
DROP TABLE IF EXISTS event_streams;
