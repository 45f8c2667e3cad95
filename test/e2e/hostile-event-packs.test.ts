// Packed first events (event store migration 0003, docs/ARCHITECTURE.md "Packed first events") as
// an attacker sees them: the packed events read by every reader exactly as rows were, over
// PostgreSQL and PGlite, under concurrency, and the product over real HTTP (code directory, Merkle
// log, compliance endpoints, rebuild, tampering). Found and fixed by this review (2026-12-06): a
// batch of two event types was read back grouped by type (packs are now of one type, mixed batches
// rows), the documented rollback to rows put a grown stream's version 1 after its version 2, and a
// pack whose size was edited in the database had readers skip its last events without a word.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createSqlEventStore, type EventStore, type StoredEvent } from '@hallmark/event-store';
import { leafHash } from '@hallmark/merkle';
import { connectTestDatabase, createPgliteDatabase, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DistributedProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { call, createEnterpriseAccount, restartTestProduct, startTestProduct, type TestProduct } from '../support/embedded.ts';
import { runHallmark } from '../support/hallmark-cli.ts';
import { acrossOlderSession, quickReleaseGates } from '../support/older-session.ts';
import { sqlOnce } from '../support/sql-once.ts';
import { rewriteFirstEvent } from '../support/stored-events.ts';
import { waitFor } from '../support/wait.ts';

// biome-ignore lint/suspicious/noExplicitAny: rows and bodies are read field by field
type Json = Record<string, any>;

interface Started {
  streamId: string;
  type: string;
  data: Json;
  metadata?: Json;
}

/** startStreamsWithRows with a row of `started_rows` per stream (its key a new id), as code-service does. */
async function startPacked(store: EventStore, db: SqlDatabase, streams: readonly Started[], rowsText?: string) {
  const start = store.startStreamsWithRows?.bind(store);
  if (!start) throw new Error('the SQL store starts streams with rows');
  const keys = streams.map(() => randomUUID());
  return start(
    streams.map((stream, index) => ({
      key: keys[index] as string,
      streamId: stream.streamId,
      events: [{ type: stream.type, data: stream.data, ...(stream.metadata ? { metadata: stream.metadata } : {}) }],
    })),
    { db, text: rowsText ?? 'INSERT INTO started_rows (key) SELECT unnest($1::text[]) RETURNING key', params: [keys] },
  );
}

/** Every event the database holds, rows and pack entries, in the log's order, read without the store's reader. */
async function modelLog(db: SqlDatabase): Promise<StoredEvent[]> {
  const rows = await db.query<Json>(
    `SELECT * FROM (
       SELECT transaction_id AS tx, global_position, 0::bigint AS n, event_id::text AS event_id, stream_id, stream_version,
              event_type, data, metadata, recorded_at
       FROM events
       UNION ALL
       SELECT p.transaction_id, p.global_position, x.n, x.e->>'id', x.e->>'stream', 1, p.event_type, x.e->'data', x.e->'metadata', p.recorded_at
       FROM event_packs p CROSS JOIN LATERAL jsonb_array_elements(p.events) WITH ORDINALITY AS x(e, n)) AS log
     ORDER BY tx, global_position, n`,
  );
  return rows.map((row) => ({
    eventId: row.event_id,
    streamId: row.stream_id,
    streamVersion: Number(row.stream_version),
    globalPosition: Number(row.global_position),
    type: row.event_type,
    data: row.data ?? {},
    metadata: row.metadata ?? {},
    recordedAt: new Date(row.recorded_at).toISOString(),
  }));
}

/** readAll in pages of `limit` until a page is empty; every page's size is checked against the limit. */
async function readAllPages(store: EventStore, limit: number, after?: string) {
  const events: StoredEvent[] = [];
  const cursors: string[] = [];
  /** After each page, how many events were read. */
  const ends: number[] = [];
  let cursor = after;
  for (let pages = 0; pages < 100_000; pages += 1) {
    const page = await store.readAll(cursor === undefined ? { limit } : { after: cursor, limit });
    expect(page.events.length, `a page of limit ${limit}`).toBeLessThanOrEqual(limit);
    if (page.events.length === 0) {
      expect(page.cursor, 'an empty page keeps its cursor').toBe(cursor ?? page.cursor);
      break;
    }
    events.push(...page.events);
    cursors.push(page.cursor);
    ends.push(events.length);
    cursor = page.cursor;
  }
  return { events, cursors, ends, cursor };
}

interface Followed {
  batches: StoredEvent[][];
  cursors: string[];
  events: StoredEvent[];
  stop(): Promise<void>;
}

/** A subscription collecting what it is handed. */
function follow(store: EventStore, options: { batchSize: number; eventTypes?: string[]; dataOfTypes?: string[] }): Followed {
  const batches: StoredEvent[][] = [];
  const cursors: string[] = [];
  const events: StoredEvent[] = [];
  const subscription = store.subscribe({
    name: `review-${randomUUID()}`,
    ...options,
    handle: async (batch, cursor) => {
      batches.push(batch);
      cursors.push(cursor);
      events.push(...batch);
    },
  });
  return { batches, cursors, events, stop: () => subscription.stop() };
}

async function until(what: string, condition: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const ids = (events: readonly StoredEvent[]) => events.map((event) => event.eventId);
const dupes = (values: readonly string[]) => values.filter((value, index) => values.indexOf(value) !== index);

/** Whether each stream's events come in version order, 1, 2, 3…, without a gap or repeat. */
function streamOrderProblems(events: readonly StoredEvent[]): string[] {
  const last = new Map<string, number>();
  const problems: string[] = [];
  for (const event of events) {
    const before = last.get(event.streamId) ?? 0;
    if (event.streamVersion !== before + 1) problems.push(`${event.streamId}: ${event.streamVersion} after ${before}`);
    last.set(event.streamId, event.streamVersion);
  }
  return problems;
}

const backends: Array<[string, () => Promise<{ db: SqlDatabase; close(): Promise<void> }>]> = [
  [
    'PostgreSQL',
    async () => {
      const database = await connectTestDatabase('review_packs');
      return { db: database.db, close: () => database.drop() };
    },
  ],
  [
    'PGlite',
    async () => {
      const db = await createPgliteDatabase();
      return { db, close: () => db.close() };
    },
  ],
];

describe.each(backends)('the event store with packs (%s)', (_name, open) => {
  let db: SqlDatabase;
  let close: () => Promise<void>;
  let store: EventStore;
  /** Streams started so far, by kind, in the order they were given. */
  const packedStreams: Started[] = [];
  const typeA = `review.a-${randomUUID().slice(0, 6)}`;
  const typeB = `review.b-${randomUUID().slice(0, 6)}`;
  const typeRow = `review.row-${randomUUID().slice(0, 6)}`;

  beforeAll(async () => {
    ({ db, close } = await open());
    store = await createSqlEventStore(db, { pollIntervalMs: 20 });
    await db.query('CREATE TABLE started_rows (key text PRIMARY KEY)');
    const stream = (label: string, type: string, index: number): Started => ({
      streamId: `asset-${label}-${randomUUID()}`,
      type,
      data: { label, index, nested: { n: index, text: 'x'.repeat(index % 7), nothing: null }, list: [index, 'é', true] },
      metadata: { requestId: `r-${index}`, provenance: { sequence: 1 } },
    });
    // A row first, then packs of 1, 99, 100, 101, 250 events; rows and appends to packed streams between them.
    await store.append(`asset-row-${randomUUID()}`, [{ type: typeRow, data: { first: true } }], { expectedVersion: 0 });
    for (const size of [1, 99, 100, 101, 250]) {
      const batch = Array.from({ length: size }, (_, index) => stream(`p${size}`, typeA, index));
      expect((await startPacked(store, db, batch)).size).toBe(size);
      packedStreams.push(...batch);
      await store.append(`asset-row-${randomUUID()}`, [{ type: typeRow, data: { after: size } }], { expectedVersion: 0 });
      const grown = batch[Math.floor(size / 2)] as Started;
      await store.append(grown.streamId, [{ type: typeRow, data: { grown: size } }], { expectedVersion: 1 });
    }
    // A batch with no metadata and empty data.
    const bare = Array.from({ length: 3 }, (_, index) => ({
      streamId: `asset-bare-${index}-${randomUUID()}`,
      type: typeB,
      data: {},
    }));
    await startPacked(store, db, bare);
    packedStreams.push(...bare);
  }, 60_000);
  afterAll(async () => {
    await store?.close();
    await close?.();
  });

  it('reads every packed event by stream exactly as it was given (readStream, readLastEvent, streamVersion, event_log)', async () => {
    const model = await modelLog(db);
    const byStream = new Map(model.map((event) => [`${event.streamId}:${event.streamVersion}`, event]));
    for (const started of packedStreams) {
      const events = await store.readStream(started.streamId);
      expect(events[0], started.streamId).toMatchObject({
        streamId: started.streamId,
        streamVersion: 1,
        type: started.type,
        data: started.data,
        metadata: started.metadata ?? {},
      });
      expect(events[0]).toEqual(byStream.get(`${started.streamId}:1`));
      expect(events.map((event) => event.streamVersion)).toEqual(events.map((_, index) => index + 1));
      expect(await store.readLastEvent(started.streamId)).toEqual(events.at(-1));
      expect(await store.streamVersion(started.streamId)).toBe(events.length);
      expect(await store.readStream(started.streamId, { afterVersion: 0, limit: 1 })).toEqual([events[0]]);
      expect(await store.readStream(started.streamId, { afterVersion: 1 })).toEqual(events.slice(1));
    }
    // The view holds each packed event once, with its stream's id, version 1 and the same id.
    const logged = await db.query<Json>(
      'SELECT stream_id, stream_version, event_id::text AS event_id, event_type, data, metadata FROM event_log WHERE stream_id = ANY($1::text[]) AND stream_version = 1',
      [packedStreams.map((stream) => stream.streamId)],
    );
    expect(logged).toHaveLength(packedStreams.length);
    for (const row of logged) {
      const event = byStream.get(`${row.stream_id}:1`) as StoredEvent;
      expect({ id: row.event_id, type: row.event_type, data: row.data ?? {}, metadata: row.metadata }).toEqual({
        id: event.eventId,
        type: event.type,
        data: event.data,
        metadata: event.metadata,
      });
    }
    expect(dupes(model.map((event) => event.eventId))).toEqual([]);
  });

  it.each([1, 2, 7, 99, 100, 101, 1_000])(
    'readAll in pages of %i gives the log once, in order, cut inside packs',
    async (limit) => {
      const model = await modelLog(db);
      const { events, cursors, ends } = await readAllPages(store, limit);
      expect(ids(events)).toEqual(ids(model));
      expect(events).toEqual(model);
      expect(streamOrderProblems(events)).toEqual([]);
      // A cursor inside a pack reads on from there as from any other cursor.
      const inside = cursors.find((cursor) => cursor.split(':').length === 3);
      if (limit < 100) expect(inside, 'a page ends inside a pack').toBeDefined();
      for (let at = 0; at < cursors.length; at += 37) {
        const rest = await readAllPages(store, 1_000, cursors[at]);
        expect(ids(rest.events), `read on from ${cursors[at]}`).toEqual(ids(events.slice(ends[at])));
      }
    },
  );

  // These subscriptions and the ones of every event below run together: each only reads the log
  // this describe's beforeAll wrote, under a name of its own, and each waits out its own quiet window
  // (that no batch, or no event, comes after the log is read) on its own subscription, so the windows
  // may overlap rather than follow one another. The local `expect` ties each assertion to its test.
  it.concurrent.for([
    [1, [typeA]],
    [99, [typeA]],
    [100, [typeA]],
    [101, [typeA]],
    [1, [typeRow]],
    [99, [typeRow]],
    [100, [typeB]],
    [101, [typeRow, typeB]],
    [3, ['none-such']],
  ] as Array<[number, string[]]>)(
    'a subscription in batches of %i of types %j gets exactly its events, then idles',
    async ([batchSize, eventTypes], { expect }) => {
      const model = await modelLog(db);
      const wanted = model.filter((event) => eventTypes.includes(event.type));
      const followed = follow(store, { batchSize, eventTypes });
      try {
        await until(`${wanted.length} events`, () => followed.events.length >= wanted.length);
        // The last cursor is the log's end: a subscription stuck before it would keep reading.
        const end = (await readAllPages(store, 10_000)).cursor;
        await until('the subscription at the log end', () => followed.cursors.at(-1) === end, 10_000).catch(() => {});
        const batchesAtEnd = followed.batches.length;
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(followed.batches.length, 'no batch once the log is read (a loop on a pack)').toBe(batchesAtEnd);
        expect(followed.cursors.at(-1)).toBe(end);
        expect(ids(followed.events)).toEqual(ids(wanted));
        expect(followed.events).toEqual(wanted);
        for (const batch of followed.batches) expect(batch.length).toBeLessThanOrEqual(batchSize);
      } finally {
        await followed.stop();
      }
    },
  );

  it.concurrent.for([
    [1, undefined],
    [99, [typeRow]],
    [100, ['none']],
    [101, [typeA]],
  ] as Array<[number, string[] | undefined]>)(
    'a subscription of every event in batches of %i with the data of %j',
    async ([batchSize, dataOfTypes], { expect }) => {
      const model = await modelLog(db);
      const followed = follow(store, { batchSize, ...(dataOfTypes ? { dataOfTypes } : {}) });
      try {
        await until(`${model.length} events`, () => followed.events.length >= model.length);
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(ids(followed.events)).toEqual(ids(model));
        const expected = model.map((event) =>
          dataOfTypes === undefined || dataOfTypes.includes(event.type) ? event : { ...event, data: {} },
        );
        expect(followed.events).toEqual(expected);
      } finally {
        await followed.stop();
      }
    },
  );
});

describe('packs written by many writers committing out of order, read meanwhile (PostgreSQL)', () => {
  let database: { db: SqlDatabase; drop(): Promise<void> };
  let store: EventStore;
  beforeAll(async () => {
    database = await connectTestDatabase('review_packs_race');
    store = await createSqlEventStore(database.db, { pollIntervalMs: 20 });
    await database.db.query('CREATE TABLE started_rows (key text PRIMARY KEY)');
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  it('every reader sees every event once, in (transaction, position) order, each stream in its order', async () => {
    const { db } = database;
    const type = 'race.packed';
    const followers = [
      follow(store, { batchSize: 7 }),
      follow(store, { batchSize: 100, eventTypes: [type] }),
      follow(store, { batchSize: 101, eventTypes: ['race.row'] }),
      follow(store, { batchSize: 99, dataOfTypes: ['race.row'] }),
    ];
    // A reader paging by hand while the writers run, with limits that cut packs.
    let pagingDone = false;
    const paged: StoredEvent[] = [];
    const paging = (async () => {
      let cursor: string | undefined;
      let quietAfterDone = 0;
      while (quietAfterDone < 3) {
        const page = await store.readAll(cursor === undefined ? { limit: 33 } : { after: cursor, limit: 33 });
        paged.push(...page.events);
        cursor = page.cursor;
        if (page.events.length === 0) {
          if (pagingDone) quietAfterDone += 1;
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      }
    })();
    try {
      const packed: string[] = [];
      const writers = Array.from({ length: 24 }, async (_, writer) => {
        for (let round = 0; round < 3; round += 1) {
          const size = 1 + ((writer * 37 + round * 53) % 160);
          const streams = Array.from({ length: size }, (_, index) => ({
            streamId: `asset-race-${writer}-${round}-${index}-${randomUUID()}`,
            type,
            data: { writer, round, index },
            metadata: { w: writer },
          }));
          packed.push(...streams.map((stream) => stream.streamId));
          // The statement takes its transaction id with its first row, then sleeps before it draws the
          // packs' positions and commits: later transactions commit first, with lower positions.
          const sleep = ((writer + round) % 4) * 0.07;
          await startPacked(
            store,
            db,
            streams,
            `INSERT INTO started_rows (key) SELECT unnest($1::text[]) RETURNING key || (SELECT pg_sleep(${sleep}))::text AS key`,
          );
          // A later event of one of them, and a stream of rows.
          const grown = streams[0] as (typeof streams)[number];
          await store.append(grown.streamId, [{ type: 'race.row', data: { grown: true } }], { expectedVersion: 1 });
          await store.append(`asset-race-row-${randomUUID()}`, [{ type: 'race.row', data: { writer } }], { expectedVersion: 0 });
        }
      });
      await Promise.all(writers);
      pagingDone = true;
      await paging;
      const model = await modelLog(db);
      const packedEvents = model.filter((event) => event.type === type);
      expect(packedEvents).toHaveLength(packed.length);
      const rowEvents = model.filter((event) => event.type === 'race.row');
      await until('every follower', () =>
        [model.length, packedEvents.length, rowEvents.length, model.length].every(
          (count, index) => (followers[index] as Followed).events.length >= count,
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(dupes(ids(paged)), 'the hand reader saw no event twice').toEqual([]);
      expect(ids(paged), 'the hand reader saw the log in order').toEqual(ids(model));
      expect(ids((followers[0] as Followed).events)).toEqual(ids(model));
      expect(ids((followers[1] as Followed).events)).toEqual(ids(packedEvents));
      expect(ids((followers[2] as Followed).events)).toEqual(ids(rowEvents));
      expect(ids((followers[3] as Followed).events)).toEqual(ids(model));
      expect(streamOrderProblems((followers[0] as Followed).events)).toEqual([]);
      expect((followers[1] as Followed).events).toEqual(packedEvents);
    } finally {
      pagingDone = true;
      await Promise.all(followers.map((followed) => followed.stop()));
      await paging.catch(() => {});
    }
  }, 60_000);
});

describe('the product over HTTP with packed codes (embedded)', () => {
  let t: TestProduct;
  let brand: { id: string; key: string };
  const gtin = '09506000134352';
  const api = (method: string, path: string, body?: unknown) =>
    call<Json>(t.url, method, `/api/v1${path}`, body === undefined ? { key: brand.key } : { key: brand.key, body });
  /** Asset ids of a batch of 250 codes and three singles. */
  let batch: string[] = [];
  const singles: string[] = [];

  beforeAll(async () => {
    t = await startTestProduct({ HALLMARK_LOG_LEVEL: 'warn' });
    const operator = t.product.generatedOperatorKey as string;
    brand = await createEnterpriseAccount(t.url, operator, 'Packed brand');
    const grant = await call(t.url, 'POST', `/api/v1/accounts/${brand.id}/gtins`, { key: operator, body: { gtin } });
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);
    const prefix = `PK-${randomUUID().slice(0, 6)}`;
    const answer = await api('POST', '/code/generate/batch', {
      items: Array.from({ length: 250 }, (_, index) => ({
        gtin,
        serialNumber: `${prefix}-${index}`,
        batchNumber: `L${index % 3}`,
      })),
    });
    expect(answer.status, JSON.stringify(answer.body).slice(0, 400)).toBe(200);
    batch = (answer.body.results as Json[]).map((result) => result.code?.assetId as string);
    expect(batch.every((id) => typeof id === 'string')).toBe(true);
    for (const serial of ['S1', 'S2', 'S3']) {
      const created = await api('POST', '/code/generate', { gtin, serialNumber: `${prefix}-${serial}` });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      singles.push(created.body.assetId as string);
    }
  }, 90_000);
  afterAll(async () => {
    await t?.stop();
  });

  const streamsOf = (assetIds: readonly string[]) => assetIds.map((id) => `asset-${id}`);

  it('stores the codes in packs, and the code directory and the Merkle log each hold every code once', async () => {
    const all = [...batch, ...singles];
    const packed = await t.product.db.query<Json>(
      'SELECT count(*)::int AS n FROM packed_streams WHERE stream_id = ANY($1::text[])',
      [streamsOf(all)],
    );
    expect(Number(packed[0]?.n), 'the codes are packed (the change under review is exercised)').toBeGreaterThan(0);
    await waitFor('the code directory and the Merkle log', async () => {
      const [directory] = await t.product.db.query<Json>(
        'SELECT count(*)::int AS n FROM code_directory WHERE asset_id = ANY($1::text[])',
        [all],
      );
      const [logged] = await t.product.db.query<Json>(
        'SELECT count(*)::int AS n FROM provenance_assets WHERE asset_id = ANY($1::text[])',
        [all],
      );
      return Number(directory?.n) === all.length && Number(logged?.n) === all.length ? true : undefined;
    });
    const trees = await t.product.db.query<Json>(
      'SELECT asset_id, tree_size::int AS size FROM provenance_assets WHERE asset_id = ANY($1::text[])',
      [all],
    );
    expect(trees.filter((tree) => Number(tree.size) !== 1)).toEqual([]);
    const directory = await t.product.db.query<Json>(
      'SELECT asset_id, serial, batch, account_id FROM code_directory WHERE asset_id = ANY($1::text[])',
      [batch],
    );
    const byId = new Map(directory.map((row) => [row.asset_id, row]));
    batch.forEach((id, index) => {
      expect(byId.get(id), id).toMatchObject({
        serial: expect.stringMatching(new RegExp(`-${index}$`)),
        batch: `L${index % 3}`,
        account_id: brand.id,
      });
    });
  }, 60_000);

  it('answers verify, merkle/root, merkle/proof and export for packed codes as for any code', async () => {
    for (const assetId of [batch[0], batch[99], batch[100], batch[101], batch[249], singles[0]] as string[]) {
      const verified = await api('GET', `/compliance/${assetId}/verify`);
      expect(verified.status, JSON.stringify(verified.body)).toBe(200);
      expect(verified.body).toMatchObject({ assetId, isValid: true, eventCount: 1 });
      const root = await waitFor(`the root of ${assetId}`, async () => {
        const answer = await api('GET', `/compliance/${assetId}/merkle/root`);
        return answer.status === 200 ? answer : undefined;
      });
      expect(root.body.treeSize).toBe(1);
      expect(root.body.rootHash).toBe(leafHash(Buffer.from(verified.body.headHash, 'hex')).toString('hex'));
      const exported = await api('GET', `/compliance/${assetId}/export`);
      expect(exported.status).toBe(200);
      expect(exported.body.events).toHaveLength(1);
      const [logged] = await t.product.db.query<Json>(
        'SELECT event_id::text AS event_id, data FROM event_log WHERE stream_id = $1 AND stream_version = 1',
        [`asset-${assetId}`],
      );
      expect(exported.body.events[0]).toMatchObject({
        eventId: logged?.event_id,
        sequence: 1,
        data: logged?.data,
        hash: verified.body.headHash,
      });
      const proof = await api('GET', `/compliance/${assetId}/merkle/proof?eventId=${logged?.event_id}`);
      expect(proof.status, JSON.stringify(proof.body)).toBe(200);
      // A neighbour's packed event is not this code's.
      const neighbour = assetId === batch[0] ? batch[1] : batch[0];
      const [other] = await t.product.db.query<Json>('SELECT event_id::text AS event_id FROM event_log WHERE stream_id = $1', [
        `asset-${neighbour}`,
      ]);
      expect((await api('GET', `/compliance/${assetId}/merkle/proof?eventId=${other?.event_id}`)).status).toBe(404);
    }
  }, 60_000);

  it('hallmark projections rebuild replays the packed codes into the same Merkle log, counting every event', async () => {
    const roots = async () =>
      new Map(
        (
          await t.product.db.query<Json>(
            "SELECT asset_id, tree_size::int AS size, encode(root_hash, 'hex') AS root FROM provenance_assets WHERE asset_id = ANY($1::text[])",
            [[...batch, ...singles]],
          )
        ).map((row) => [row.asset_id, `${row.size}:${row.root}`]),
      );
    const before = await roots();
    expect(before.size).toBe(batch.length + singles.length);
    const [{ n: total } = { n: 0 }] = await t.product.db.query<Json>('SELECT count(*)::int AS n FROM event_log');
    await t.stopKeepingData();
    const rebuilt = await runHallmark(t.dataDir, {}, ['projections', 'rebuild']);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(rebuilt.stdout).toContain(`Rebuilt the Merkle projection from ${total} events`);
    expect(rebuilt.stdout).not.toContain('replacing');
    t = await restartTestProduct(t);
    expect(await roots()).toEqual(before);
    expect((await api('GET', `/compliance/${batch[100]}/verify`)).body).toMatchObject({ isValid: true, eventCount: 1 });
  }, 60_000);

  it('sees a packed event tampered with in the database: its data, its place in the pack, its pack’s type', async () => {
    const [dataTampered, swappedA, swappedB, typeTampered] = [batch[10], batch[20], batch[21], batch[150]] as string[];
    await rewriteFirstEvent(t.product.db, `asset-${dataTampered}`, (event) => ({
      ...event,
      data: { ...event.data, serial: 'FORGED' },
    }));
    const tampered = await api('GET', `/compliance/${dataTampered}/verify`);
    expect(tampered.body, 'a rewritten packed event').toMatchObject({ isValid: false, brokenAt: { sequence: 1 } });
    // Two streams of one pack swapped in packed_streams: each reads the other's event.
    await t.product.db.query(
      `UPDATE packed_streams SET pack_index = CASE stream_id WHEN $1 THEN (SELECT pack_index FROM packed_streams WHERE stream_id = $2)
         ELSE (SELECT pack_index FROM packed_streams WHERE stream_id = $1) END WHERE stream_id IN ($1, $2)`,
      [`asset-${swappedA}`, `asset-${swappedB}`],
    );
    for (const assetId of [swappedA, swappedB]) {
      const answer = await api('GET', `/compliance/${assetId}/verify`);
      expect(answer.body, `${assetId} reads its neighbour's event`).toMatchObject({ isValid: false });
    }
    // The pack's type changed: every event of it hashes otherwise.
    const [pack] = await t.product.db.query<Json>('SELECT pack_position FROM packed_streams WHERE stream_id = $1', [
      `asset-${typeTampered}`,
    ]);
    await t.product.db.query(`UPDATE event_packs SET event_type = 'code.generated-x' WHERE global_position = $1`, [
      pack?.pack_position,
    ]);
    expect((await api('GET', `/compliance/${typeTampered}/verify`)).body).toMatchObject({ isValid: false });
    // Untouched codes verify still.
    expect((await api('GET', `/compliance/${batch[0]}/verify`)).body).toMatchObject({ isValid: true });
  }, 60_000);
});

describe('what packs change that readers or writers could tell (PostgreSQL)', () => {
  let database: { db: SqlDatabase; drop(): Promise<void> };
  let store: EventStore;
  beforeAll(async () => {
    database = await connectTestDatabase('review_packs_edges');
    store = await createSqlEventStore(database.db, { pollIntervalMs: 20 });
    await database.db.query('CREATE TABLE started_rows (key text PRIMARY KEY)');
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  it('a batch of streams of two types is read in the order it was given, as its rows were before packs', async () => {
    const { cursor: end } = await readAllPages(store, 10_000);
    const streams = Array.from({ length: 6 }, (_, index) => ({
      streamId: `asset-mixed-${index}-${randomUUID()}`,
      type: index % 2 === 0 ? 'mixed.even' : 'mixed.odd',
      data: { index },
    }));
    await startPacked(store, database.db, streams);
    const { events } = await readAllPages(store, 1_000, end);
    expect(
      events.map((event) => event.data.index),
      'startStreamsWithRows regroups a batch by type (packedStart orders packs by type): the log order of the batch changed',
    ).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('refuses a packed batch naming one stream twice, or a stream started before either way, storing nothing', async () => {
    const twice = `asset-twice-${randomUUID()}`;
    const fresh = `asset-fresh-${randomUUID()}`;
    await expect(
      startPacked(store, database.db, [
        { streamId: fresh, type: 't', data: {} },
        { streamId: twice, type: 't', data: { n: 1 } },
        { streamId: twice, type: 't', data: { n: 2 } },
      ]),
    ).rejects.toMatchObject({ code: 'CONFLICT', details: { streamId: twice } });
    expect(await store.readStream(fresh)).toEqual([]);
    expect(await store.streamVersion(twice)).toBe(0);
    // Packed, then started again by every way of starting a stream.
    const packed = `asset-packed-${randomUUID()}`;
    await startPacked(store, database.db, [{ streamId: packed, type: 't', data: {} }]);
    await expect(startPacked(store, database.db, [{ streamId: packed, type: 'other', data: {} }])).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    await expect(store.startStreams([{ streamId: packed, events: [{ type: 't', data: {} }] }])).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    await expect(store.append(packed, [{ type: 't', data: {} }], { expectedVersion: 0 })).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    expect((await store.readStream(packed)).map((event) => event.streamVersion)).toEqual([1]);
    expect((await modelLog(database.db)).filter((event) => event.streamId === packed)).toHaveLength(1);
  });

  it('refuses to read a pack whose size was edited, rather than skip or invent its events without a word', async () => {
    const { cursor: end } = await readAllPages(store, 10_000);
    const type = `sized-${randomUUID()}`;
    const streams = Array.from({ length: 3 }, (_, index) => ({
      streamId: `asset-sized-${index}-${randomUUID()}`,
      type,
      data: { index },
    }));
    await startPacked(store, database.db, streams);
    await database.db.query('UPDATE event_packs SET size = 2 WHERE event_type = $1', [type]);
    await expect(readAllPages(store, 1_000, end)).rejects.toThrow(/holds 3 events where its size says 2/);
    await database.db.query('UPDATE event_packs SET size = 3 WHERE event_type = $1', [type]);
    const { events } = await readAllPages(store, 1_000, end);
    expect(events.filter((event) => event.type === type).map((event) => event.data.index)).toEqual([0, 1, 2]);
  });
});

/** The statements of the rollback block in docs/ARCHITECTURE.md ("Packed first events"), without BEGIN and COMMIT. */
async function documentedRollback(): Promise<string[]> {
  const text = await readFile(new URL('../../docs/ARCHITECTURE.md', import.meta.url), 'utf8');
  const block = /```sql\n\s*-- rollback: packed events back to rows\n([\s\S]*?)```/.exec(text)?.[1];
  if (!block) throw new Error('docs/ARCHITECTURE.md has no rollback block');
  return block
    .split(';')
    .map((statement) => statement.trim())
    .filter((statement) => statement !== '' && statement !== 'BEGIN' && statement !== 'COMMIT');
}

describe('the documented rollback to a release before packs (PostgreSQL)', () => {
  let database: { db: SqlDatabase; drop(): Promise<void> };
  let store: EventStore;
  beforeAll(async () => {
    database = await connectTestDatabase('review_packs_rollback');
    store = await createSqlEventStore(database.db, { pollIntervalMs: 20 });
    await database.db.query('CREATE TABLE started_rows (key text PRIMARY KEY)');
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  it('the documented rollback (docs/ARCHITECTURE.md, packs back to rows) keeps each stream in its order', async () => {
    const { cursor: end } = await readAllPages(store, 10_000);
    const streams = Array.from({ length: 5 }, (_, index) => ({
      streamId: `asset-rollback-${index}-${randomUUID()}`,
      type: 'rb.first',
      data: { index },
    }));
    await startPacked(store, database.db, streams);
    // A code with a later event (a report confirmed, a transfer…): version 2 is a row after its pack.
    await store.append((streams[2] as Started).streamId, [{ type: 'rb.later', data: {} }], { expectedVersion: 1 });
    // The block of docs/ARCHITECTURE.md, as written there, its statements in one transaction.
    await database.db.transaction(async (tx) => {
      for (const statement of await documentedRollback()) await tx.query(statement);
    });
    expect(await database.db.query('SELECT 1 FROM event_packs UNION ALL SELECT 1 FROM packed_streams')).toEqual([]);
    const { events } = await readAllPages(store, 1_000, end);
    expect(events.filter((event) => event.type.startsWith('rb.'))).toHaveLength(6);
    expect(
      streamOrderProblems(events.filter((event) => event.type.startsWith('rb.'))),
      'after the rollback a grown stream reads version 2 before version 1 (a replay then fails: "event 2 arrived where 1 belongs")',
    ).toEqual([]);
  });
});

describe('a rolling update from a release that reads no packs (distributed)', () => {
  let product: DistributedProduct;
  beforeAll(async () => {
    product = await startDistributedProduct(quickReleaseGates);
  }, 120_000);
  afterAll(async () => {
    await product?.stop();
  }, 60_000);

  /** Generates `count` codes of the operator's in one batch; how many of their first events are rows and how many packed. */
  const batchOf = async (count: number) => {
    const prefix = `RU-${randomUUID().slice(0, 8)}`;
    const made = await call<Json>(product.url, 'POST', '/api/v1/code/generate/batch', {
      key: product.operatorKey,
      body: { items: Array.from({ length: count }, (_, i) => ({ gtin: '09506000134352', serialNumber: `${prefix}-${i}` })) },
    });
    expect(made.status, JSON.stringify(made.body).slice(0, 300)).toBeLessThan(300);
    const [counts] = await sqlOnce<{ rows: string; packed: string }>(
      product.databaseUrl,
      `SELECT (SELECT count(*) FROM events WHERE event_type = 'code.generated' AND data->>'serial' LIKE $1)::text AS rows,
              (SELECT count(*) FROM packed_streams s JOIN codes c ON 'asset-' || c.asset_id = s.stream_id
               WHERE c.serial LIKE $1)::text AS packed`,
      [`${prefix}-%`],
    );
    return { rows: Number(counts?.rows), packed: Number(counts?.packed) };
  };

  it('stores codes’ events as rows while a process of that release is connected, then packs them', async () => {
    // A verify-service of the release before: its sessions bear the bare service name. While it is
    // connected (after the gate's next look), every code of a batch is a row.
    const { during, after } = await acrossOlderSession(product.databaseUrl, 'verify-service', () => batchOf(120));
    expect(during).toEqual({ rows: 120, packed: 0 });
    expect(after).toEqual({ rows: 0, packed: 120 });
  }, 60_000);
});
