import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { connectTestDatabase, loadMigrations, runMigrations, type SqlDatabase, type SqlExecutor } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEventStoreContract } from './event-store.contract.ts';
import type { EventStore, EventSubscription, StoredEvent } from './event-store.ts';
import { createSqlEventStore } from './sql-event-store.ts';
import { isVersionConflict } from './version-conflict.ts';

describeEventStoreContract('PostgreSQL', async () => {
  const database = await connectTestDatabase('event_store');
  const store = await createSqlEventStore(database.db, { pollIntervalMs: 50 });
  return {
    store,
    readModels: { db: database.db, sharesTransaction: true },
    leavesOutData: true,
    async teardown() {
      await store.close();
      await database.drop();
    },
  };
});

/**
 * Opens a transaction on `db`, runs `work` in it and keeps it open until the answer is called (which
 * commits it): a transaction in flight, as a slow writer's, or another database's on the server.
 */
async function holdTransaction(db: SqlDatabase, work: (tx: SqlExecutor) => Promise<unknown>): Promise<() => Promise<void>> {
  let commit!: () => void;
  const mayCommit = new Promise<void>((resolve) => {
    commit = resolve;
  });
  let started!: () => void;
  const hasStarted = new Promise<void>((resolve) => {
    started = resolve;
  });
  const held = db.transaction(async (tx) => {
    await work(tx);
    started();
    await mayCommit;
  });
  await Promise.race([hasStarted, held]);
  return async () => {
    commit();
    await held;
  };
}

/** Waits until `seen` holds `count` events, for up to `ms` (30 s: the quick looks go on that long). */
async function untilSeen(seen: StoredEvent[], count: number, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (seen.length < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe('PostgreSQL event store: a transaction that commits late', () => {
  let database: { db: SqlDatabase; drop(): Promise<void> };
  let store: EventStore;
  beforeAll(async () => {
    database = await connectTestDatabase('event_store_gap');
    store = await createSqlEventStore(database.db, { pollIntervalMs: 20 });
  });
  afterAll(async () => {
    await database.drop();
  });

  it('is not skipped by a subscriber that already saw a later commit', async () => {
    const early = `gap-early-${randomUUID()}`;
    const late = `gap-late-${randomUUID()}`;
    const seen: StoredEvent[] = [];
    const subscription = store.subscribe({
      name: `gap-${randomUUID()}`,
      async handle(events) {
        seen.push(...events.filter((event) => event.streamId === early || event.streamId === late));
      },
    });

    // Transaction A takes its transaction id and position first, then stays open.
    const commitA = await holdTransaction(database.db, (tx) =>
      tx.query(`INSERT INTO events (stream_id, stream_version, event_id, event_type, data) VALUES ($1, 1, $2, 'early', '{}')`, [
        early,
        randomUUID(),
      ]),
    );

    // Transaction B starts later and commits first.
    await store.append(late, [{ type: 'late', data: {} }], { expectedVersion: 0 });
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(seen.map((event) => event.type)).toEqual([]);

    await commitA();
    await untilSeen(seen, 2, 5_000);
    await subscription.stop();
    expect(seen.map((event) => event.type)).toEqual(['early', 'late']);
  });
});

describe('PostgreSQL event store: a notification that finds its event held back by an older transaction', () => {
  let database: { db: SqlDatabase; drop(): Promise<void> };
  let store: EventStore;
  beforeAll(async () => {
    database = await connectTestDatabase('event_store_horizon');
    // A poll far longer than the test: only the wake-up and the quick looks after it can deliver.
    store = await createSqlEventStore(database.db, { pollIntervalMs: 120_000 });
  });
  afterAll(async () => {
    await store.close();
    await database.drop();
  });

  /**
   * Opens a transaction with an id in this database that stays open (it writes nothing to the
   * events) until the answer is called: it holds the readable horizon back, as a slow writer does.
   */
  const holdHorizon = () => holdTransaction(database.db, (tx) => tx.query('SELECT pg_current_xact_id()'));

  /** A subscription that keeps the events of one stream. */
  function follow(stream: string): { seen: StoredEvent[]; subscription: EventSubscription } {
    const seen: StoredEvent[] = [];
    const subscription = store.subscribe({
      name: `horizon-${randomUUID()}`,
      async handle(events) {
        seen.push(...events.filter((event) => event.streamId === stream));
      },
    });
    return { seen, subscription };
  }

  it('looks again soon after the older transaction ends, without waiting for the poll', async () => {
    const stream = `horizon-${randomUUID()}`;
    const { seen, subscription } = follow(stream);
    // A first event seen means the subscription listens for notifications (it starts to before its
    // first read), so the one below is the notification's to deliver, not the start's quick looks.
    await store.append(stream, [{ type: 'ready', data: {} }], { expectedVersion: 0 });
    await untilSeen(seen, 1);
    expect(seen.map((event) => event.type)).toEqual(['ready']);
    const endOlder = await holdHorizon();
    await store.append(stream, [{ type: 'held', data: {} }], { expectedVersion: 1 });
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(seen).toHaveLength(1);
    await endOlder();
    await untilSeen(seen, 2);
    await subscription.stop();
    expect(seen.map((event) => event.type)).toEqual(['ready', 'held']);
  });

  it('finds events held back when it started, though they bring it no notification', async () => {
    const stream = `horizon-${randomUUID()}`;
    const endOlder = await holdHorizon();
    // Appended (and notified) before the subscription exists, and unreadable until the older commits.
    await store.append(stream, [{ type: 'held', data: {} }], { expectedVersion: 0 });
    const { seen, subscription } = follow(stream);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(seen).toEqual([]);
    await endOlder();
    await untilSeen(seen, 1);
    await subscription.stop();
    expect(seen.map((event) => event.type)).toEqual(['held']);
  });
});

describe('PostgreSQL event store: a transaction in flight in another database of the server', () => {
  let database: { db: SqlDatabase; drop(): Promise<void> };
  let elsewhere: { db: SqlDatabase; drop(): Promise<void> };
  let store: EventStore;
  beforeAll(async () => {
    database = await connectTestDatabase('event_store_here');
    elsewhere = await connectTestDatabase('event_store_elsewhere');
    store = await createSqlEventStore(database.db, { pollIntervalMs: 20 });
  });
  afterAll(async () => {
    await store.close();
    await database.drop();
    await elsewhere.drop();
  });

  /** Reads every page until one holds the stream's events, for up to `ms`; what it found by then. */
  async function readStreamWithin(stream: string, ms: number): Promise<StoredEvent[]> {
    const deadline = Date.now() + ms;
    for (;;) {
      let cursor: string | undefined;
      const found: StoredEvent[] = [];
      for (;;) {
        const page = await store.readAll(cursor === undefined ? { limit: 1000 } : { after: cursor, limit: 1000 });
        found.push(...page.events.filter((event) => event.streamId === stream));
        if (page.events.length === 0) break;
        cursor = page.cursor;
      }
      if (found.length > 0 || Date.now() >= deadline) return found;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('holds back no event of this database, though its transaction id is older', async () => {
    // The other database's transaction takes its id first and stays open: the server's oldest
    // transaction in flight, older than the append's below.
    const commitElsewhere = await holdTransaction(elsewhere.db, (tx) => tx.query('SELECT pg_current_xact_id()'));
    try {
      const held = await elsewhere.db.query<{ held: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND backend_xid IS NOT NULL) AS held`,
      );
      expect(held[0]?.held).toBe(true);
      const stream = `elsewhere-${randomUUID()}`;
      await store.append(stream, [{ type: 'here', data: {} }], { expectedVersion: 0 });
      const seen: StoredEvent[] = [];
      const subscription = store.subscribe({
        name: `elsewhere-${randomUUID()}`,
        async handle(events) {
          seen.push(...events.filter((event) => event.streamId === stream));
        },
      });
      // Readable while the other transaction is still open (before, not until it ended).
      expect((await readStreamWithin(stream, 2_000)).map((event) => event.type)).toEqual(['here']);
      await untilSeen(seen, 1, 2_000);
      await subscription.stop();
      expect(seen.map((event) => event.type)).toEqual(['here']);
    } finally {
      await commitElsewhere();
    }
  });

  it('still holds back an event behind an older transaction of this database', async () => {
    const commitHere = await holdTransaction(database.db, (tx) => tx.query('SELECT pg_current_xact_id()'));
    const stream = `here-${randomUUID()}`;
    try {
      await store.append(stream, [{ type: 'behind', data: {} }], { expectedVersion: 0 });
      expect(await readStreamWithin(stream, 300)).toEqual([]);
    } finally {
      await commitHere();
    }
    expect((await readStreamWithin(stream, 5_000)).map((event) => event.type)).toEqual(['behind']);
  });
});

describe('PostgreSQL event store: stream versions', () => {
  let database: { db: SqlDatabase; drop(): Promise<void> };
  let store: EventStore;
  beforeAll(async () => {
    database = await connectTestDatabase('event_store_versions');
    store = await createSqlEventStore(database.db, { pollIntervalMs: 20 });
  });
  afterAll(async () => {
    await database.drop();
  });

  it('refuses an append under way once a start of the same new stream commits: a version conflict, the start’s event kept', async () => {
    const stream = `start-race-${randomUUID()}`;
    let append!: Promise<unknown>;
    // The start's transaction holds its uncommitted event while the append reads version 0 (it cannot
    // see the event yet) and then waits on the events' key for the start to end.
    await store.startStreams([{ streamId: stream, events: [{ type: 'started', data: {} }] }], {
      readModels: {
        db: database.db,
        async write() {
          append = store.append(stream, [{ type: 'appended', data: {} }], { expectedVersion: 0 }).catch((error) => error);
          await new Promise((resolve) => setTimeout(resolve, 300));
        },
      },
    });
    const refused = await append;
    expect(isVersionConflict(refused)).toBe(true);
    expect(refused).toMatchObject({ details: { streamId: stream, expectedVersion: 0, actualVersion: 1 } });
    expect((await store.readStream(stream)).map((event) => [event.type, event.streamVersion])).toEqual([['started', 1]]);
    expect(await store.streamVersion(stream)).toBe(1);
  });
});

describe('PostgreSQL event store: the migration that drops event_streams', () => {
  it('drops the stream rows of the releases before 2026-12-01 and keeps every event and version', async () => {
    const database = await connectTestDatabase('event_store_drop_streams');
    try {
      // Given a database as the release of 2026-11-29 left it: the first migration, a stream's events and its row
      const { migrations } = await loadMigrations('event-store', fileURLToPath(new URL('../migrations', import.meta.url)));
      await runMigrations(database.db, {
        module: 'event-store',
        migrations: migrations.filter((migration) => migration.version === 1),
      });
      await database.db.query(
        `INSERT INTO events (stream_id, stream_version, event_id, event_type, data) VALUES ('before-1', 1, $1, 'a', '{}'), ('before-1', 2, $2, 'b', '{}')`,
        [randomUUID(), randomUUID()],
      );
      await database.db.query(`INSERT INTO event_streams (stream_id, version) VALUES ('before-1', 2)`);

      // When this release's store starts (its migrations run)
      const store = await createSqlEventStore(database.db);

      // Then the table is gone, the stream's version is its events', and appends go on from it
      const [table] = await database.db.query<{ name: string | null }>(`SELECT to_regclass('event_streams')::text AS name`);
      expect(table?.name).toBeNull();
      expect(await store.streamVersion('before-1')).toBe(2);
      await store.append('before-1', [{ type: 'c', data: {} }], { expectedVersion: 2 });
      expect((await store.readStream('before-1')).map((event) => [event.type, event.streamVersion])).toEqual([
        ['a', 1],
        ['b', 2],
        ['c', 3],
      ]);
    } finally {
      await database.drop();
    }
  });
});

describe('PostgreSQL event store: packed first events and the releases before them', () => {
  let database: { db: SqlDatabase; drop(): Promise<void> };
  beforeAll(async () => {
    database = await connectTestDatabase('event_store_packs');
    await database.db.query('CREATE TABLE started_rows (key text PRIMARY KEY)');
  });
  afterAll(async () => {
    await database?.drop();
  });
  /** Starts `streams` with a row each (keyed by a new id) and one event each. */
  const start = (store: EventStore, streams: readonly string[]) => {
    const startStreamsWithRows = store.startStreamsWithRows?.bind(store);
    if (!startStreamsWithRows) throw new Error('the SQL store starts streams with rows');
    const keys = streams.map(() => randomUUID());
    return startStreamsWithRows(
      streams.map((streamId, index) => ({
        key: keys[index] as string,
        streamId,
        events: [{ type: 'born', data: { streamId } }],
      })),
      {
        db: database.db,
        text: 'INSERT INTO started_rows (key) SELECT unnest($1::text[]) RETURNING key',
        params: [keys],
      },
    );
  };
  const countOf = async (text: string, params: unknown[]) =>
    Number((await database.db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${text}`, params))[0]?.n);

  it('writes rows, not packs, with packFirstEvents false (a rolling update from a release that reads no packs)', async () => {
    const store = await createSqlEventStore(database.db, { packFirstEvents: false });
    const streams = Array.from({ length: 3 }, () => `unpacked-${randomUUID()}`);
    await start(store, streams);
    expect(await countOf('events WHERE stream_id = ANY($1::text[]) AND stream_version = 1', [streams])).toBe(3);
    expect(await countOf('packed_streams WHERE stream_id = ANY($1::text[])', [streams])).toBe(0);
    // And a store that packs reads them, and refuses to start them again in a pack.
    const packing = await createSqlEventStore(database.db);
    expect((await packing.readStream(streams[0] as string)).map((event) => event.data)).toEqual([{ streamId: streams[0] }]);
    await expect(start(packing, [`fresh-${randomUUID()}`, streams[1] as string])).rejects.toMatchObject({
      code: 'CONFLICT',
      details: { streamId: streams[1] },
    });
  });

  it('resumes a checkpoint of a release before packs (a position of a row) across the packs after it', async () => {
    const store = await createSqlEventStore(database.db, { pollIntervalMs: 20 });
    const before = `before-packs-${randomUUID()}`;
    await store.append(before, [{ type: 'born', data: {} }], { expectedVersion: 0 });
    // The checkpoint such a release stored: `<transaction>:<position>` of the last row it read.
    let cursor: string | undefined;
    for (
      let page = await store.readAll({ limit: 1_000 });
      page.events.length > 0;
      page = await store.readAll({ after: cursor as string, limit: 1_000 })
    ) {
      cursor = page.cursor;
    }
    expect(cursor).toMatch(/^\d+:\d+$/);
    const packed = Array.from({ length: 150 }, () => `after-packs-${randomUUID()}`);
    await start(store, packed);
    const seen: StoredEvent[] = [];
    let after = cursor as string;
    const deadline = Date.now() + 10_000;
    while (seen.length < packed.length && Date.now() < deadline) {
      const page = await store.readAll({ after, limit: 40 });
      seen.push(...page.events);
      after = page.cursor;
    }
    expect(seen.map((event) => event.streamId)).toEqual(packed);
  });
});
