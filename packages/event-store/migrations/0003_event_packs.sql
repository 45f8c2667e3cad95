-- Packed first events (issue #19, storage per code; docs/ARCHITECTURE.md, "Event store"). A batch
-- of new streams that start with one event each (code-service's generated codes) stores those
-- events in packs of up to 100, one row per pack, instead of a row per event: the events of a pack
-- share their type, transaction, position in the log and time of recording, and their JSON
-- compresses together (PostgreSQL compresses a value over ~2 KB), about 230 B an event in place of
-- ~1,240 B for a row and its four index entries. Readers see the same events as before, each with
-- its stream, version 1 and id; a pack's events share its global position. A stream's later
-- events are rows of `events` as any other's.
CREATE TABLE event_packs (
  global_position bigint PRIMARY KEY DEFAULT nextval('events_global_position_seq'),
  transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
  event_type text NOT NULL,
  -- How many events: readers count a page in events without reading the pack.
  size integer NOT NULL CHECK (size > 0),
  -- [{ "stream": …, "id": …, "data": {…}, "metadata": {…} }, …] in log order.
  events jsonb NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX event_packs_in_commit_order ON event_packs (transaction_id, global_position);

-- Where each packed stream's first event is: its pack and its place in the pack's array. A stream
-- is started either here or by a version-1 row of `events`; each start path looks at the other.
CREATE TABLE packed_streams (
  stream_id text PRIMARY KEY,
  pack_position bigint NOT NULL,
  pack_index integer NOT NULL
);

-- Every event as a row, packed ones included, for an operator's queries (and tests'). It reads
-- every pack: for ad-hoc use, not for the product's paths.
CREATE VIEW event_log AS
  SELECT global_position, transaction_id, stream_id, stream_version, event_id, event_type, data, metadata, recorded_at
  FROM events
  UNION ALL
  SELECT p.global_position, p.transaction_id, e.value->>'stream', 1, (e.value->>'id')::uuid, p.event_type,
         e.value->'data', e.value->'metadata', p.recorded_at
  FROM event_packs p CROSS JOIN LATERAL jsonb_array_elements(p.events) AS e(value);
