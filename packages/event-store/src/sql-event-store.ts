import { fileURLToPath } from 'node:url';
import { HallmarkError } from '@hallmark/contracts';
import { uuidV7 } from '@hallmark/crypto';
import { loadMigrations, queryAfterLock, runMigrations, type SqlDatabase, type SqlExecutor } from '@hallmark/sql';
import { type PollingSource, startCatchUpSubscription } from './catch-up-subscription.ts';
import type { CheckpointStore, EventStore, JsonObject, NewEvent, StoredEvent } from './event-store.ts';
import { versionConflict } from './version-conflict.ts';

const notifyChannel = 'hallmark_events';
const migrationsFolder = fileURLToPath(new URL('../migrations', import.meta.url));

interface EventRow {
  event_id: string;
  stream_id: string;
  stream_version: string | number;
  global_position: string | number;
  /** text, because xid8 has no JavaScript type; never order by this alias. */
  transaction_text: string;
  event_type: string;
  data: JsonObject | null;
  metadata: JsonObject | null;
  recorded_at: Date | string;
}

/** An event row's columns. */
const eventColumns =
  'event_id, stream_id, stream_version, global_position, transaction_id::text AS transaction_text, event_type, data, metadata, recorded_at';

/**
 * A packed stream's first event as an event row (the stream's id in `$1`): its pack's entry, found
 * through packed_streams. Nothing for a stream not packed.
 */
const packedFirstEvent = `SELECT (entry->>'id')::uuid AS event_id, s.stream_id, 1::bigint AS stream_version, p.global_position,
         p.transaction_id::text AS transaction_text, p.event_type, entry->'data' AS data, entry->'metadata' AS metadata, p.recorded_at
  FROM packed_streams s
  JOIN event_packs p ON p.global_position = s.pack_position
  CROSS JOIN LATERAL (SELECT p.events -> s.pack_index AS entry) AS packed
  WHERE s.stream_id = $1`;

function toStoredEvent(row: EventRow): StoredEvent {
  return {
    eventId: row.event_id,
    streamId: row.stream_id,
    streamVersion: Number(row.stream_version),
    globalPosition: Number(row.global_position),
    type: row.event_type,
    // Left out by a typed read (readPage): an empty object, as the event type promises one.
    data: row.data ?? {},
    metadata: row.metadata ?? {},
    recordedAt: new Date(row.recorded_at).toISOString(),
  };
}

/** One event of a pack, as `event_packs.events` holds it. */
interface PackedEntry {
  stream: string;
  id: string;
  data?: JsonObject;
  metadata?: JsonObject;
}

/**
 * A row of readPage: an event row, or a pack (`packed`; its event columns null) of `size` events
 * whose `taken` after the first `skip` are in the page. `entries`: the pack's events (all of them),
 * or, for a pack of a type the page leaves out, the one it ends with.
 */
interface PageRow extends EventRow {
  packed: boolean;
  skip: number;
  taken: number;
  size: number;
  entries: PackedEntry[] | null;
  passed: string | number;
}

/** The events of a pack that a page holds; `asked`: of a type the page brings, so `entries` is whole. */
function packedEventsOf(row: PageRow, asked: boolean, withData: boolean): StoredEvent[] {
  const entries = row.entries ?? [];
  // Pages are counted by `size`: a pack whose events are not that many (a row edited in the
  // database) would have readers skip or invent events without a word. Refused instead: the read
  // fails, and a subscription retries and reports it (onError) until the row is put right.
  if (asked && entries.length !== Number(row.size)) {
    throw new Error(
      `The event pack at position ${row.global_position} holds ${entries.length} events where its size says ${row.size}; nothing of it is read.`,
    );
  }
  const read = asked ? entries.slice(Number(row.skip), Number(row.skip) + Number(row.taken)) : entries;
  const recordedAt = new Date(row.recorded_at).toISOString();
  return read.map((entry) => ({
    eventId: entry.id,
    streamId: entry.stream,
    streamVersion: 1,
    globalPosition: Number(row.global_position),
    type: row.event_type,
    data: (withData ? entry.data : undefined) ?? {},
    metadata: (asked ? entry.metadata : undefined) ?? {},
    recordedAt,
  }));
}

/** Where a page that ends with `row` ends: after it, or inside it when a pack was cut. */
function cursorAfter(row: PageRow): string {
  const read = Number(row.skip) + Number(row.taken);
  const inside = row.packed && read < Number(row.size);
  return `${row.transaction_text}:${row.global_position}${inside ? `:${read}` : ''}`;
}

function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';
}

function duplicateEventId(streamId: string, cause: unknown): HallmarkError {
  return new HallmarkError(
    'CONFLICT',
    `An event with one of these event ids is already stored (stream ${streamId}).`,
    {
      streamId,
    },
    { cause },
  );
}

/** The events' unique key on (stream_id, stream_version): two writers of one version of a stream. */
const streamVersionKey = 'events_stream_id_stream_version_key';

function constraintOf(error: unknown): string | undefined {
  const constraint = (error as { constraint?: unknown }).constraint;
  return typeof constraint === 'string' ? constraint : undefined;
}

/** packed_streams' key: with the events' streamVersionKey, what refuses a second start of a stream. */
const packedStreamsKey = 'packed_streams_pkey';

function streamExists(streamId: string, cause?: unknown): HallmarkError {
  return new HallmarkError(
    'CONFLICT',
    `Stream ${streamId} already exists; none of the streams was started.`,
    { streamId, expectedVersion: 0 },
    cause === undefined ? undefined : { cause },
  );
}

/** What a failed start of new streams means: one of them exists, or an event id is taken. */
function startConflict(error: unknown, firstStreamId: string): unknown {
  if (!isUniqueViolation(error)) return error;
  const constraint = constraintOf(error);
  if (constraint !== streamVersionKey && constraint !== packedStreamsKey) return duplicateEventId(firstStreamId, error);
  // PostgreSQL names the key: "Key (stream_id, stream_version)=(…, 1) already exists." or "Key (stream_id)=(…) already exists."
  const detail = String((error as { detail?: unknown }).detail ?? '');
  const streamId = /\)=\((.*?)(?:, \d+)?\) already exists/.exec(detail)?.[1] ?? '';
  return streamExists(streamId, error);
}

/**
 * Stores the events of new streams as rows of `events`, from the statement's `started` (stream_id,
 * stream_version, event_id, event_type, data, metadata, n), in `n` order. The events' key refuses a
 * second version 1 of a stream that exists as rows; a packed stream's first event is no row there
 * (migration 0003), so each stream packed before gets its version 1 twice here, the second with an
 * id of its own, and the key refuses the statement for it too: the mirror of packedStart's second
 * packed_streams row. Looked up apart before, that was a round trip of its own before every start
 * (embedded, another wait behind whatever PGlite's one connection was running).
 */
const insertNewStreamEvents = `INSERT INTO events (stream_id, stream_version, event_id, event_type, data, metadata)
      SELECT stream_id, stream_version, event_id, event_type, data, metadata FROM (
        SELECT stream_id, stream_version, event_id, event_type, data, metadata, n FROM started
        UNION ALL
        SELECT s.stream_id, 1, gen_random_uuid(), s.event_type, s.data, s.metadata, s.n
        FROM started s
        WHERE s.stream_version = 1 AND EXISTS (SELECT 1 FROM packed_streams p WHERE p.stream_id = s.stream_id)
      ) AS new_events
      ORDER BY n`;

/** How many first events a pack holds at most (migration 0003). */
const packSize = 100;

/**
 * A stream's version: its last event's, found backwards in the events' (stream_id, stream_version)
 * index, else 1 for a packed stream with no later events; 0 when it has none. A committed append is
 * counted (it wrote its events in its transaction).
 */
async function versionOf(sql: SqlExecutor, streamId: string): Promise<number> {
  // A packed stream without later events has its first event in a pack (migration 0003).
  const rows = await sql.query<{ stream_version: string | number }>(
    `SELECT COALESCE(
       (SELECT stream_version FROM events WHERE stream_id = $1 ORDER BY stream_version DESC LIMIT 1),
       (SELECT 1 FROM packed_streams WHERE stream_id = $1),
       0) AS stream_version`,
    [streamId],
  );
  return Number(rows[0]?.stream_version ?? 0);
}

/**
 * Cursor of the SQL stores: `<transaction id>:<global position>` of the last row read (an event, or
 * a pack read to its end), or `<transaction id>:<global position>:<events read>` inside a pack.
 */
const startCursor = '0:0';
function parseCursor(cursor: string): { transactionId: string; position: string; readOfPack: number } {
  const match = /^(\d+):(\d+)(?::(\d+))?$/.exec(cursor);
  if (!match?.[1] || !match[2]) throw new Error(`Not an event store cursor: ${cursor}`);
  return { transactionId: match[1], position: match[2], readOfPack: Number(match[3] ?? 0) };
}

export interface SqlEventStoreOptions {
  /** How often an idle subscription looks again without a notification. */
  pollIntervalMs?: number;
  /**
   * startStreamsWithRows packs streams that start with one event each (migration 0003); false
   * writes them as rows, for readers of a release before packs during a rolling update; a function
   * asks at each start (the distributed form's packs gate). Default true.
   */
  packFirstEvents?: boolean | (() => Promise<boolean>);
}

/** The events of a new stream as the statements' JSON rows: versions from 1, an id for each. */
function newStreamEventRows(streamId: string, events: readonly NewEvent[]) {
  return events.map((event, index) => ({
    stream: streamId,
    version: index + 1,
    id: event.eventId ?? uuidV7(),
    type: event.type,
    data: event.data,
    metadata: event.metadata ?? {},
  }));
}

/** startStreamsWithRows's events for rowsStart: each with its row's key. */
function streamEventRows(streams: Parameters<NonNullable<EventStore['startStreamsWithRows']>>[0]) {
  return streams.flatMap(({ key, streamId, events }) => newStreamEventRows(streamId, events).map((row) => ({ key, ...row })));
}

/** startStreamsWithRows's first events for packedStart: each with its row's key and its entry in a pack. */
function packedEventRows(streams: Parameters<NonNullable<EventStore['startStreamsWithRows']>>[0]) {
  return streams.map(({ key, streamId, events: [event] }) => ({
    key,
    entry: { stream: streamId, id: uuidV7(), data: event?.data, metadata: event?.metadata ?? {} },
  }));
}

/**
 * startStreamsWithRows's events as rows (after `stored`, the caller's rows): the events of the rows
 * stored, in the events' order. A data-modifying WITH runs each part once and to the end, and the
 * statement commits or fails as a whole (its own transaction).
 */
function rowsStart(eventsParam: number): string {
  return `started AS (
      SELECT e->>'stream' AS stream_id, (e->>'version')::bigint AS stream_version, (e->>'id')::uuid AS event_id,
             e->>'type' AS event_type, e->'data' AS data, e->'metadata' AS metadata, n
      FROM jsonb_array_elements($${eventsParam}::jsonb) WITH ORDINALITY AS batch(e, n)
      WHERE e->>'key' IN (SELECT key FROM stored)
    ),
    appended AS (${insertNewStreamEvents})`;
}

/**
 * startStreamsWithRows's first events packed (migration 0003), all of the one type in `typeParam`: the events of the
 * rows stored, in packs of up to packSize in the events' order, each pack's position drawn in that order,
 * and each stream's place in packed_streams. packed_streams' key refuses a stream packed before; a
 * stream started as rows of events (its version 1 found by the events' key, one probe a stream) is
 * put in packed_streams a second time, so that the key refuses the statement for it too. A stream's
 * pack position is read from one array of the packs' positions (packs are numbered from 0 without
 * gaps): joined to the packs instead, each stream rescanned the packs with their events, ~10 µs a
 * stream in PGlite.
 */
function packedStart(eventsParam: number, typeParam: number): string {
  return `started AS (
      SELECT e->'entry'->>'stream' AS stream_id, n, e->'entry' AS entry, row_number() OVER (ORDER BY n) - 1 AS place
      FROM jsonb_array_elements($${eventsParam}::jsonb) WITH ORDINALITY AS batch(e, n)
      WHERE e->>'key' IN (SELECT key FROM stored)
    ),
    packs AS MATERIALIZED (
      SELECT grouped.*, nextval('events_global_position_seq') AS global_position
      FROM (SELECT place / ${packSize} AS pack, min(n) AS first, count(*)::int AS size, jsonb_agg(entry ORDER BY n) AS events
            FROM started GROUP BY place / ${packSize} ORDER BY first) AS grouped
    ),
    packed AS (
      INSERT INTO event_packs (global_position, event_type, size, events)
      SELECT global_position, $${typeParam}::text, size, events FROM packs ORDER BY global_position
    ),
    registered AS (
      INSERT INTO packed_streams (stream_id, pack_position, pack_index)
      SELECT s.stream_id, (SELECT array_agg(global_position ORDER BY pack) FROM packs)[s.place / ${packSize} + 1],
             (s.place % ${packSize})::int
      FROM started s
      UNION ALL
      SELECT s.stream_id, 0, 0
      FROM started s
      CROSS JOIN LATERAL (SELECT 1 FROM events e WHERE e.stream_id = s.stream_id AND e.stream_version = 1 LIMIT 1) AS as_rows
    )`;
}

/**
 * Below what transaction id every event is final: the oldest transaction still in flight that may
 * write to this database's events, else the first id not yet finished when the statement began
 * (pg_snapshot_xmax). A server's snapshot lists the transactions in flight in every database on it;
 * one whose backend pg_stat_activity shows in another database cannot write here (a backend keeps
 * its database, and a transaction id its backend), so a long transaction elsewhere on a shared
 * server holds no projection back. Anything not shown there counts as this database's: a
 * transaction that ended or moved on since the snapshot, a prepared one, a background worker's.
 * (`backend_xid` is shown to every role; the subquery runs only when some transaction is in flight.)
 */
const readHorizon = `COALESCE(
  (SELECT min(in_flight) FROM pg_snapshot_xip(pg_current_snapshot()) AS in_flight
   WHERE xid(in_flight) NOT IN (
     SELECT elsewhere.backend_xid FROM pg_stat_get_activity(NULL) AS elsewhere
     WHERE elsewhere.backend_xid IS NOT NULL
       AND elsewhere.datid <> (SELECT oid FROM pg_database WHERE datname = current_database()))),
  pg_snapshot_xmax(pg_current_snapshot()))`;

/**
 * The event store over SQL, shared by PostgreSQL and PGlite. Runs its migrations first.
 *
 * Appends take a per-stream advisory lock before their first write, so a stream's later events
 * always belong to later transactions; readers order by (transaction id, position) and stop below
 * the oldest transaction in flight that may write here (readHorizon). Together: no event is ever skipped and each
 * stream is read in its own order.
 */
export async function createSqlEventStore(db: SqlDatabase, options: SqlEventStoreOptions = {}): Promise<EventStore> {
  await runMigrations(db, await loadMigrations('event-store', migrationsFolder));
  const pollIntervalMs = options.pollIntervalMs ?? 100;
  const packFirstEvents = options.packFirstEvents ?? true;

  const checkpoints: CheckpointStore = {
    async load(subscription) {
      const rows = await db.query<{ cursor: string }>('SELECT cursor FROM event_checkpoints WHERE subscription = $1', [
        subscription,
      ]);
      return rows[0]?.cursor;
    },
    async save(subscription, cursor) {
      await db.query(
        `INSERT INTO event_checkpoints (subscription, cursor) VALUES ($1, $2)
         ON CONFLICT (subscription) DO UPDATE SET cursor = EXCLUDED.cursor, updated_at = now()`,
        [subscription, cursor],
      );
    },
  };

  /**
   * A page of up to `limit` events in commit order: rows of `events` and the events of packs, a
   * pack cut where the page ends (the cursor then says how many of its events were read). With
   * `types`, only the events of those types and the page's last event (without its data and
   * metadata, unless it is of them) come back, and `passed` says how many events the page went past:
   * the cursor moves past the others without their rows being sent and decoded, which was most of
   * what a projection of a few types spent on a log of other events. With `dataTypes`, the other
   * events come without data (PollingSource.readAll).
   */
  const readPage = async ({
    after = startCursor,
    limit = 500,
    types,
    dataTypes,
  }: Parameters<PollingSource['readAll']>[0] = {}) => {
    const cursor = parseCursor(after);
    const params: unknown[] = [cursor.transactionId, cursor.position, limit, cursor.readOfPack];
    const param = (value: readonly string[] | undefined) => (value ? `$${params.push(value)}` : undefined);
    const typesParam = param(types);
    const dataTypesParam = param(dataTypes);
    const ofTypes = (typeParam: string) => `page.event_type = ANY(${typeParam}::text[])`;
    const brings = (parts: ReadonlyArray<string | undefined>) =>
      parts
        .filter((part) => part !== undefined)
        .map(ofTypes)
        .join(' AND ') || 'true';
    const withData = brings([typesParam, dataTypesParam]);
    const withMetadata = brings([typesParam]);
    // A pack's events come whole when its type is asked for; a pack that is only the page's last
    // brings the one event the page ends with, without data and metadata.
    const entries = typesParam
      ? `CASE WHEN ${ofTypes(typesParam)} THEN page.events
              WHEN page.packed THEN jsonb_build_array(jsonb_build_object(
                'stream', page.events -> (page.skip + page.taken - 1) -> 'stream',
                'id', page.events -> (page.skip + page.taken - 1) -> 'id')) END`
      : 'page.events';
    const rows = await db.query<PageRow>(
      `WITH horizon AS MATERIALIZED (SELECT ${readHorizon} AS below),
       merged AS (
         (SELECT e.transaction_id, e.global_position, e.event_type, 1 AS size, 0 AS skip, false AS packed,
                 e.event_id, e.stream_id, e.stream_version, e.data, e.metadata, NULL::jsonb AS events, e.recorded_at
          FROM events e
          WHERE (e.transaction_id, e.global_position) > ($1::xid8, $2::bigint)
            AND e.transaction_id < (SELECT below FROM horizon)
          ORDER BY e.transaction_id, e.global_position
          LIMIT $3)
         UNION ALL
         (SELECT p.transaction_id, p.global_position, p.event_type, p.size,
                 CASE WHEN (p.transaction_id, p.global_position) = ($1::xid8, $2::bigint) THEN $4::int ELSE 0 END, true,
                 NULL, NULL, 1, NULL, NULL, p.events, p.recorded_at
          FROM event_packs p
          WHERE (p.transaction_id, p.global_position) >= ($1::xid8, $2::bigint)
            AND ((p.transaction_id, p.global_position) > ($1::xid8, $2::bigint) OR $4::int > 0)
            AND p.transaction_id < (SELECT below FROM horizon)
          ORDER BY p.transaction_id, p.global_position
          LIMIT $3)
       ),
       counted AS (
         SELECT merged.*, sum(size - skip) OVER (ORDER BY transaction_id, global_position) AS upto FROM merged
       ),
       page AS (
         SELECT counted.*, least(size - skip, $3 - (upto - (size - skip)))::int AS taken,
                lead(global_position) OVER (ORDER BY transaction_id, global_position) IS NULL AS last_of_page
         FROM counted
         WHERE upto - (size - skip) < $3
       ),
       passed AS (SELECT sum(taken) AS events FROM page)
       SELECT page.transaction_id::text AS transaction_text, page.global_position, page.event_type, page.packed,
              page.skip, page.taken, page.size, page.event_id, page.stream_id, page.stream_version,
              CASE WHEN ${withData} THEN page.data END AS data,
              CASE WHEN ${withMetadata} THEN page.metadata END AS metadata,
              ${entries} AS entries, page.recorded_at, (SELECT events FROM passed) AS passed
       FROM page
       ${typesParam ? `WHERE ${ofTypes(typesParam)} OR page.last_of_page` : ''}
       ORDER BY page.transaction_id, page.global_position`,
      params,
    );
    const bringsData = (type: string) =>
      (types === undefined || types.includes(type)) && (dataTypes === undefined || dataTypes.includes(type));
    const bringsMetadata = (type: string) => types === undefined || types.includes(type);
    const events = rows.flatMap((row) =>
      row.packed ? packedEventsOf(row, bringsMetadata(row.event_type), bringsData(row.event_type)) : [toStoredEvent(row)],
    );
    const last = rows.at(-1);
    return {
      events,
      cursor: last ? cursorAfter(last) : after,
      // A typed page leaves events out: how many it went past tells whether the log goes on.
      ...(typesParam && last ? { passed: Number(last.passed) } : {}),
    };
  };
  const readAll: EventStore['readAll'] = (options = {}) => readPage({ ...options, types: undefined, dataTypes: undefined });

  return {
    atomicReadModels: true,
    async append(streamId, events, { expectedVersion, readModels }) {
      if (events.length === 0) throw new Error('append needs at least one event');
      let lostVersions = false;
      const appended = await db
        .transaction(async (tx) => {
          await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [streamId]);
          const actualVersion = await versionOf(tx, streamId);
          if (expectedVersion !== 'any' && expectedVersion !== actualVersion) {
            throw versionConflict(streamId, expectedVersion, actualVersion);
          }
          const rows = events.map((event, index) => ({
            version: actualVersion + index + 1,
            id: event.eventId ?? uuidV7(),
            type: event.type,
            data: event.data,
            metadata: event.metadata ?? {},
          }));
          const inserted = await tx
            .query<EventRow>(
              `INSERT INTO events (stream_id, stream_version, event_id, event_type, data, metadata)
           SELECT $1, (e->>'version')::bigint, (e->>'id')::uuid, e->>'type', e->'data', e->'metadata'
           FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS batch(e, n)
           ORDER BY n
           RETURNING ${eventColumns}`,
              [streamId, JSON.stringify(rows)],
            )
            .catch((error: unknown) => {
              if (!isUniqueViolation(error)) throw error;
              // A stream started without the lock (startStreams) took these versions first: a
              // version conflict, told below with the version the stream has now.
              lostVersions = constraintOf(error) === streamVersionKey;
              throw lostVersions ? error : duplicateEventId(streamId, error);
            });
          const result = {
            nextExpectedVersion: actualVersion + events.length,
            events: inserted.map(toStoredEvent).sort((a, b) => a.streamVersion - b.streamVersion),
          };
          // Read models of the same database commit with the events, or neither does.
          if (readModels?.db === db) await readModels.write(tx, result);
          await tx.query('SELECT pg_notify($1, $2)', [notifyChannel, streamId]);
          return result;
        })
        .catch(async (error: unknown) => {
          throw lostVersions ? versionConflict(streamId, expectedVersion, await versionOf(db, streamId)) : error;
        });
      if (readModels && readModels.db !== db) await readModels.db.transaction((tx) => readModels.write(tx, appended));
      return appended;
    },

    async startStreams(streams, { readModels } = {}) {
      if (streams.length === 0) return;
      const rows = streams.flatMap(({ streamId, events }) => newStreamEventRows(streamId, events));
      await db.transaction(async (tx) => {
        // New streams have no earlier events to come after, so no per-stream lock is needed: the
        // events' key refuses version 1 of a stream that exists, as rows or packed (insertNewStreamEvents).
        await tx
          .query(
            `WITH started AS (
               SELECT e->>'stream' AS stream_id, (e->>'version')::bigint AS stream_version, (e->>'id')::uuid AS event_id,
                      e->>'type' AS event_type, e->'data' AS data, e->'metadata' AS metadata, n
               FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS batch(e, n)
             )
             ${insertNewStreamEvents}`,
            [JSON.stringify(rows)],
          )
          .catch((error: unknown) => {
            throw startConflict(error, streams[0]?.streamId ?? '');
          });
        if (readModels?.db === db) await readModels.write(tx);
        await tx.query('SELECT pg_notify($1, $2)', [notifyChannel, '*']);
      });
      if (readModels && readModels.db !== db) await readModels.db.transaction((tx) => readModels.write(tx));
    },

    async startStreamsWithRows(streams, rows) {
      if (rows.db !== db) throw new Error('startStreamsWithRows writes rows of the event store’s own database only');
      if (streams.length === 0) return new Set();
      // Streams that start with one event each, all of one type, of ids the store makes, are packed;
      // others are rows: several events a stream, types mixed (packs are of one type, and the log
      // keeps the order given), an event id of the caller's, which only the events' key refuses
      // twice, or a stream alone (a pack of one is not compressed, and with its packed_streams row
      // takes more room than a row of events: PostgreSQL compresses values over ~2 KB).
      const type = streams[0]?.events[0]?.type;
      const packs =
        streams.length > 1 &&
        streams.every(
          ({ events: started }) => started.length === 1 && started[0]?.type === type && started[0]?.eventId === undefined,
        ) &&
        (typeof packFirstEvents === 'function' ? await packFirstEvents() : packFirstEvents);
      const eventsParam = rows.params.length + 1;
      const statement = {
        text: `WITH stored AS (${rows.text}), ${packs ? packedStart(eventsParam, eventsParam + 1) : rowsStart(eventsParam)}
           SELECT key, (SELECT pg_notify('${notifyChannel}', '*')) IS NULL AS notified FROM stored`,
        params: packs
          ? [...rows.params, JSON.stringify(packedEventRows(streams)), type]
          : [...rows.params, JSON.stringify(streamEventRows(streams))],
      };
      const { sharedLock } = rows;
      const stored = await (sharedLock === undefined
        ? db.query<{ key: string }>(statement.text, statement.params)
        : queryAfterLock<{ key: string }>(
            db,
            { text: 'SELECT pg_advisory_xact_lock_shared(hashtextextended($1, 0))', params: [sharedLock] },
            statement,
          )
      ).catch((error: unknown) => {
        throw startConflict(error, streams[0]?.streamId ?? '');
      });
      return new Set(stored.map((row) => row.key));
    },

    async readStream(streamId, { afterVersion = 0, limit = 10_000 } = {}) {
      const rows = await db.query<EventRow>(
        `(SELECT ${eventColumns} FROM events WHERE stream_id = $1 AND stream_version > $2)
         UNION ALL (${packedFirstEvent} AND $2 < 1)
         ORDER BY stream_version LIMIT $3`,
        [streamId, afterVersion, limit],
      );
      return rows.map(toStoredEvent);
    },

    async readLastEvent(streamId) {
      const rows = await db.query<EventRow>(
        `(SELECT ${eventColumns} FROM events WHERE stream_id = $1 ORDER BY stream_version DESC LIMIT 1)
         UNION ALL (${packedFirstEvent})
         ORDER BY stream_version DESC LIMIT 1`,
        [streamId],
      );
      return rows[0] ? toStoredEvent(rows[0]) : undefined;
    },

    async streamVersion(streamId) {
      return versionOf(db, streamId);
    },

    readAll,

    subscribe(subscribeOptions) {
      const source: PollingSource = { readAll: readPage, watch: (onAppend: () => void) => db.listen(notifyChannel, onAppend) };
      return startCatchUpSubscription(source, checkpoints, { ...subscribeOptions, pollIntervalMs });
    },

    ping: () => db.ping(),
    // The database belongs to whoever passed it in; they close it.
    close: async () => {},
  };
}
