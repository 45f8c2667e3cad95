-- A stream's version is its last event's (the events' (stream_id, stream_version) key) since the
-- release of 2026-11-29, which still wrote a row here for the processes of the release before it;
-- the release of 2026-12-01 neither wrote nor read one. No process of a release that may run beside
-- this one (a rolling update from 2026-12-01 or later) touches the table, so it goes, and with it
-- ~175 B of every stream started before 2026-12-01 (docs/ARCHITECTURE.md, Event store).
DROP TABLE IF EXISTS event_streams;
