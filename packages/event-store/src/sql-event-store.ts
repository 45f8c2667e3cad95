import { fileURLToPath } from 'node:url';
import { HallmarkError } from '@hallmark/contracts';
import { uuidV7 } from '@hallmark/crypto';
import { loadMigrations, runMigrations, type SqlDatabase, type SqlExecutor } from '@hallmark/sql';
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

/**
 * An event row's columns. With `typesParam`, only events of those types bring their data and
 * metadata; with `dataTypesParam`, only events of those types bring their data (every one its metadata).
 */
const eventColumnsOf = (typesParam?: string, dataTypesParam?: string) => {
  const ofTypes = (param: string) => `event_type = ANY(${param}::text[])`;
  const dataWhen = [typesParam, dataTypesParam]
    .filter((param) => param !== undefined)
    .map(ofTypes)
    .join(' AND ');
  const data = dataWhen ? `CASE WHEN ${dataWhen} THEN data END AS data` : 'data';
  const metadata = typesParam ? `CASE WHEN ${ofTypes(typesParam)} THEN metadata END AS metadata` : 'metadata';
  return `event_id, stream_id, stream_version, global_position, transaction_id::text AS transaction_text, event_type, ${data}, ${metadata}, recorded_at`;
};
const eventColumns = eventColumnsOf();

function toStoredEvent(row: EventRow): StoredEvent {
  return {
    eventId: row.event_id,
    streamId: row.stream_id,
    streamVersion: Number(row.stream_version),
    globalPosition: Number(row.global_position),
    type: row.event_type,
    // Left out by a typed read (eventColumnsOf): an empty object, as the event type promises one.
    data: row.data ?? {},
    metadata: row.metadata ?? {},
    recordedAt: new Date(row.recorded_at).toISOString(),
  };
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

/** What a failed start of new streams means: one of them exists, or an event id is taken. */
function startConflict(error: unknown, firstStreamId: string): unknown {
  if (!isUniqueViolation(error)) return error;
  if (constraintOf(error) !== streamVersionKey) return duplicateEventId(firstStreamId, error);
  // PostgreSQL names the key: "Key (stream_id, stream_version)=(…, 1) already exists."
  const detail = String((error as { detail?: unknown }).detail ?? '');
  const streamId = /\)=\((.*?), \d+\) already exists/.exec(detail)?.[1] ?? '';
  return new HallmarkError(
    'CONFLICT',
    `Stream ${streamId} already exists; none of the streams was started.`,
    { streamId, expectedVersion: 0 },
    { cause: error },
  );
}

/**
 * A stream's version: its last event's, found backwards in the events' (stream_id, stream_version)
 * index; 0 when it has none. A committed append is counted (it wrote its events in its transaction).
 */
async function versionOf(sql: SqlExecutor, streamId: string): Promise<number> {
  const rows = await sql.query<{ stream_version: string | number }>(
    'SELECT stream_version FROM events WHERE stream_id = $1 ORDER BY stream_version DESC LIMIT 1',
    [streamId],
  );
  return Number(rows[0]?.stream_version ?? 0);
}

/** Cursor of the SQL stores: `<transaction id>:<global position>` of the last event read. */
const startCursor = '0:0';
function parseCursor(cursor: string): [string, string] {
  const match = /^(\d+):(\d+)$/.exec(cursor);
  if (!match?.[1] || !match[2]) throw new Error(`Not an event store cursor: ${cursor}`);
  return [match[1], match[2]];
}

export interface SqlEventStoreOptions {
  /** How often an idle subscription looks again without a notification. */
  pollIntervalMs?: number;
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
   * A page of up to `limit` events in commit order. With `types`, only the events of those types
   * and the page's last event (without its data and metadata, unless it is of them) come back, and
   * `passed` says how many events the page went past: the cursor moves past the others without
   * their rows being sent and decoded, which was most of what a projection of a few types spent on
   * a log of other events. With `dataTypes`, the other events come without data (PollingSource.readAll).
   */
  const readPage = async ({
    after = startCursor,
    limit = 500,
    types,
    dataTypes,
  }: Parameters<PollingSource['readAll']>[0] = {}) => {
    const [transactionId, position] = parseCursor(after);
    const params: unknown[] = [transactionId, position, limit];
    const param = (value: readonly string[] | undefined) => (value ? `$${params.push(value)}` : undefined);
    const typesParam = param(types);
    const columns = types || dataTypes ? eventColumnsOf(typesParam, param(dataTypes)) : eventColumns;
    const pageOf = (selected: string) => `SELECT ${selected} FROM events
       WHERE (transaction_id, global_position) > ($1::xid8, $2::bigint)
         AND transaction_id < ${readHorizon}
       ORDER BY transaction_id, global_position
       LIMIT $3`;
    // The window runs over the page (the LIMIT is inside it), not over the rest of the log.
    const text = typesParam
      ? `SELECT ${columns}, passed FROM (
           SELECT paged.*, lead(global_position) OVER (ORDER BY transaction_id, global_position) IS NULL AS last_of_page,
                  count(*) OVER () AS passed
           FROM (${pageOf('*')}) AS paged) AS page
         WHERE event_type = ANY(${typesParam}::text[]) OR last_of_page
         ORDER BY transaction_id, global_position`
      : pageOf(columns);
    const rows = await db.query<EventRow & { passed?: string | number }>(text, params);
    const last = rows.at(-1);
    return {
      events: rows.map(toStoredEvent),
      cursor: last ? `${last.transaction_text}:${last.global_position}` : after,
      // A typed page leaves events out: how many it went past tells whether the log goes on.
      ...(last?.passed === undefined ? {} : { passed: Number(last.passed) }),
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
        // events' key refuses version 1 of a stream that exists.
        await tx
          .query(
            `INSERT INTO events (stream_id, stream_version, event_id, event_type, data, metadata)
             SELECT e->>'stream', (e->>'version')::bigint, (e->>'id')::uuid, e->>'type', e->'data', e->'metadata'
             FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS batch(e, n) ORDER BY n`,
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
      const events = streams.flatMap(({ key, streamId, events: started }) =>
        newStreamEventRows(streamId, started).map((row) => ({ key, ...row })),
      );
      const eventsParam = rows.params.length + 1;
      // One statement: the rows first; the events of the rows stored, in the events' order; a
      // notification when anything was stored. A data-modifying WITH runs each part once
      // and to the end, and the statement commits or fails as a whole (its own transaction).
      const statement = {
        text: `WITH stored AS (${rows.text}),
           started AS (
             SELECT e->>'stream' AS stream_id, (e->>'version')::bigint AS stream_version, (e->>'id')::uuid AS event_id,
                    e->>'type' AS event_type, e->'data' AS data, e->'metadata' AS metadata, n
             FROM jsonb_array_elements($${eventsParam}::jsonb) WITH ORDINALITY AS batch(e, n)
             WHERE e->>'key' IN (SELECT key FROM stored)
           ),
           appended AS (
             INSERT INTO events (stream_id, stream_version, event_id, event_type, data, metadata)
             SELECT stream_id, stream_version, event_id, event_type, data, metadata FROM started ORDER BY n
           )
           SELECT key, (SELECT pg_notify('${notifyChannel}', '*')) IS NULL AS notified FROM stored`,
        params: [...rows.params, JSON.stringify(events)],
      };
      const { sharedLock } = rows;
      const stored = await (sharedLock === undefined
        ? db.query<{ key: string }>(statement.text, statement.params)
        : db.transaction(async (tx) => {
            // The statement's snapshot is taken after the lock: it sees what the lock's holder committed.
            await tx.query('SELECT pg_advisory_xact_lock_shared(hashtextextended($1, 0))', [sharedLock]);
            return tx.query<{ key: string }>(statement.text, statement.params);
          })
      ).catch((error: unknown) => {
        throw startConflict(error, streams[0]?.streamId ?? '');
      });
      return new Set(stored.map((row) => row.key));
    },

    async readStream(streamId, { afterVersion = 0, limit = 10_000 } = {}) {
      const rows = await db.query<EventRow>(
        `SELECT ${eventColumns} FROM events WHERE stream_id = $1 AND stream_version > $2
         ORDER BY stream_version LIMIT $3`,
        [streamId, afterVersion, limit],
      );
      return rows.map(toStoredEvent);
    },

    async readLastEvent(streamId) {
      const rows = await db.query<EventRow>(
        `SELECT ${eventColumns} FROM events WHERE stream_id = $1 ORDER BY stream_version DESC LIMIT 1`,
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
