-- The event log. One row per event; a stream's events are numbered 1, 2, 3… in stream_version.
CREATE TABLE event_streams (
  stream_id text PRIMARY KEY,
  version bigint NOT NULL
);

CREATE TABLE events (
  global_position bigserial PRIMARY KEY,
  -- The appending transaction. Readers order by (transaction_id, global_position) and read only
  -- below the oldest transaction still in flight, so a late commit is never skipped.
  transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
  stream_id text NOT NULL,
  stream_version bigint NOT NULL,
  event_id uuid NOT NULL UNIQUE,
  event_type text NOT NULL,
  data jsonb NOT NULL,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (stream_id, stream_version)
);

CREATE INDEX events_in_commit_order ON events (transaction_id, global_position);

CREATE TABLE event_checkpoints (
  subscription text PRIMARY KEY,
  cursor text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
