import { randomUUID } from 'node:crypto';
import type { SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventStore, NewEvent, StoredEvent, SubscribeOptions } from './event-store.ts';
import { isVersionConflict } from './version-conflict.ts';

export interface EventStoreFixture {
  store: EventStore;
  /** A database for read models; `sharesTransaction` when the store commits them with its events. */
  readModels: { db: SqlDatabase; sharesTransaction: boolean };
  /** The store reads no data of the types a subscription's `dataOfTypes` leaves out (the SQL adapter). */
  leavesOutData?: boolean;
  teardown(): Promise<void>;
}

/** Wait until `condition` holds, checking every 20 ms; fails after `timeoutMs`. */
async function eventually(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Every event `readAll` gives, page after page of `limit`, from the start until `enough` holds of
 * what was read. A page may come back empty before then: on PostgreSQL, an older transaction in
 * flight that may write to the events (this database's, or one whose backend has just ended or
 * moved on: see readHorizon) holds the readable horizon back, so an empty page waits 20 ms and asks
 * again from the same cursor. Fails after 10 s.
 */
async function readAllUntil(
  store: EventStore,
  limit: number,
  enough: (seen: readonly StoredEvent[]) => boolean,
): Promise<StoredEvent[]> {
  const deadline = Date.now() + 10_000;
  const seen: StoredEvent[] = [];
  let cursor: string | undefined;
  while (!enough(seen)) {
    if (Date.now() > deadline) throw new Error(`readAll gave ${seen.length} events, not yet the ones expected`);
    const page = await store.readAll(cursor === undefined ? { limit } : { after: cursor, limit });
    if (page.events.length === 0) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      continue;
    }
    seen.push(...page.events);
    cursor = page.cursor;
  }
  return seen;
}

/**
 * The behaviour every event store adapter must show. Each adapter's test file calls this with a
 * fixture that gives it a store of its own (a fresh database, or a unique stream prefix).
 */
export function describeEventStoreContract(
  name: string,
  createFixture: () => Promise<EventStoreFixture>,
  options: { writers: number; totalEvents: number } = { writers: 8, totalEvents: 5_000 },
): void {
  describe(`event store contract: ${name}`, () => {
    let fixture: EventStoreFixture;
    let store: EventStore;
    const streamOf = (label: string) => `test-${label}-${randomUUID()}`;

    beforeAll(async () => {
      fixture = await createFixture();
      store = fixture.store;
    });
    afterAll(async () => {
      await fixture?.teardown();
    });

    it('appends to a new stream and reads it back in order', async () => {
      const stream = streamOf('basic');
      const result = await store.append(
        stream,
        [
          { type: 'registered', data: { title: 'Submariner' }, metadata: { requestId: 'r1' } },
          { type: 'listed', data: { lot: 7 } },
        ],
        { expectedVersion: 0 },
      );
      expect(result.nextExpectedVersion).toBe(2);
      expect(result.events.map((event) => event.streamVersion)).toEqual([1, 2]);
      const events = await store.readStream(stream);
      expect(events.map((event) => [event.type, event.streamVersion, event.data])).toEqual([
        ['registered', 1, { title: 'Submariner' }],
        ['listed', 2, { lot: 7 }],
      ]);
      expect(events[0]?.metadata).toEqual({ requestId: 'r1' });
      expect(events[0]?.streamId).toBe(stream);
      expect(Number.isNaN(Date.parse(events[0]?.recordedAt ?? ''))).toBe(false);
      expect(events[1]!.globalPosition).toBeGreaterThan(events[0]!.globalPosition);
    });

    it('reads a stream’s newest event, and nothing for a stream that does not exist', async () => {
      const stream = streamOf('last');
      expect(await store.readLastEvent(stream)).toBeUndefined();
      await store.append(
        stream,
        [
          { type: 'a', data: {} },
          { type: 'b', data: { n: 2 } },
        ],
        { expectedVersion: 0 },
      );
      await store.append(stream, [{ type: 'c', data: { n: 3 } }], { expectedVersion: 2 });
      expect(await store.readLastEvent(stream)).toMatchObject({ type: 'c', streamVersion: 3, data: { n: 3 }, streamId: stream });
    });

    it('tells a stream’s version: 0 before it exists, then every answered append counted', async () => {
      const stream = streamOf('version');
      expect(await store.streamVersion(stream)).toBe(0);
      await store.append(stream, [{ type: 'a', data: {} }], { expectedVersion: 0 });
      expect(await store.streamVersion(stream)).toBe(1);
      await store.append(
        stream,
        [
          { type: 'b', data: {} },
          { type: 'c', data: {} },
        ],
        { expectedVersion: 1 },
      );
      expect(await store.streamVersion(stream)).toBe(3);
      const started = streamOf('version-started');
      await store.startStreams([{ streamId: started, events: [{ type: 'a', data: {} }] }]);
      expect(await store.streamVersion(started)).toBe(1);
    });

    it('reads on at once when woken, instead of lingering', async () => {
      const stream = streamOf('wake');
      const received: number[] = [];
      await store.append(stream, [{ type: 'n', data: { n: 1 } }], { expectedVersion: 0 });
      const subscription = store.subscribe({
        name: `wake-${randomUUID()}`,
        // Every page is short, so each is followed by the full linger unless something cuts it short.
        batchSize: 100_000,
        lingerMs: 10_000,
        async handle(events) {
          for (const event of events) if (event.streamId === stream) received.push(Number(event.data.n));
        },
      });
      try {
        // Woken while it waits, too: on PostgreSQL an older transaction in flight may hold the first
        // read's horizon below the event, and the linger would then keep it 10 s.
        await eventually(
          () => {
            if (received.length === 0) subscription.wake();
            return received.length === 1;
          },
          10_000,
          'the first event',
        );
        await store.append(stream, [{ type: 'n', data: { n: 2 } }], { expectedVersion: 1 });
        subscription.wake();
        await eventually(() => received.length === 2, 2_000, 'the second event, well before the linger ends');
        expect(received).toEqual([1, 2]);
      } finally {
        await subscription.stop();
      }
    });

    it('refuses an append whose expected version is stale, and stores nothing of it', async () => {
      const stream = streamOf('conflict');
      await store.append(stream, [{ type: 'a', data: {} }], { expectedVersion: 0 });
      const attempt = store.append(stream, [{ type: 'b', data: {} }], { expectedVersion: 0 });
      await expect(attempt).rejects.toSatisfy(isVersionConflict);
      await attempt.catch((error) => {
        expect(error.details).toMatchObject({ streamId: stream, expectedVersion: 0, actualVersion: 1 });
      });
      await store.append(stream, [{ type: 'c', data: {} }], { expectedVersion: 1 });
      await store.append(stream, [{ type: 'd', data: {} }], { expectedVersion: 'any' });
      expect((await store.readStream(stream)).map((event) => event.type)).toEqual(['a', 'c', 'd']);
    });

    it('lets exactly one of many concurrent appends at the same expected version win', async () => {
      const stream = streamOf('race');
      const attempts = await Promise.allSettled(
        Array.from({ length: 10 }, (_, index) => store.append(stream, [{ type: 'e', data: { index } }], { expectedVersion: 0 })),
      );
      expect(attempts.filter((attempt) => attempt.status === 'fulfilled')).toHaveLength(1);
      for (const attempt of attempts) {
        if (attempt.status === 'rejected') expect(isVersionConflict(attempt.reason)).toBe(true);
      }
      expect(await store.readStream(stream)).toHaveLength(1);
    });

    it('refuses an event id that is already stored', async () => {
      const eventId = randomUUID();
      await store.append(streamOf('dup'), [{ type: 'x', data: {}, eventId }], { expectedVersion: 0 });
      await expect(
        store.append(streamOf('dup'), [{ type: 'x', data: {}, eventId }], { expectedVersion: 0 }),
      ).rejects.toMatchObject({ code: 'CONFLICT' });
    });

    it('starts many new streams at once, or none when one of them exists', async () => {
      const streams = Array.from({ length: 50 }, (_, i) => ({
        streamId: streamOf(`batch-${i}`),
        events: [{ type: 'code.generated', data: { i } }],
      }));
      await store.startStreams(streams);
      for (const index of [0, 49]) {
        const streamId = streams[index]?.streamId ?? '';
        expect((await store.readStream(streamId)).map((event) => [event.type, event.streamVersion])).toEqual([
          ['code.generated', 1],
        ]);
      }
      const fresh = streamOf('fresh');
      await expect(
        store.startStreams([{ streamId: fresh, events: [{ type: 'x', data: {} }] }, streams[3] as never]),
      ).rejects.toMatchObject({
        code: 'CONFLICT',
        details: { streamId: streams[3]?.streamId },
      });
      expect(await store.readStream(fresh)).toEqual([]);
      expect(await store.append(fresh, [{ type: 'x', data: {} }], { expectedVersion: 0 })).toMatchObject({
        nextExpectedVersion: 1,
      });
    });

    it('lets either a start or an append of the same new stream win, and tells the other of the stream', async () => {
      for (let round = 0; round < 20; round++) {
        const stream = streamOf(`start-or-append-${round}`);
        const [started, appended] = await Promise.allSettled([
          store.startStreams([{ streamId: stream, events: [{ type: 'started', data: {} }] }]),
          store.append(stream, [{ type: 'appended', data: {} }], { expectedVersion: 0 }),
        ]);
        expect([started.status, appended.status].sort()).toEqual(['fulfilled', 'rejected']);
        if (started.status === 'rejected') {
          expect(started.reason).toMatchObject({ code: 'CONFLICT', details: { streamId: stream } });
        }
        if (appended.status === 'rejected') expect(isVersionConflict(appended.reason)).toBe(true);
        const events = await store.readStream(stream);
        expect(events.map((event) => [event.type, event.streamVersion])).toEqual([
          [started.status === 'fulfilled' ? 'started' : 'appended', 1],
        ]);
      }
    });

    it('reads a stream from a version, and an unknown stream as empty', async () => {
      const stream = streamOf('partial');
      await store.append(
        stream,
        [1, 2, 3, 4].map((n) => ({ type: 'n', data: { n } })),
        { expectedVersion: 0 },
      );
      expect((await store.readStream(stream, { afterVersion: 2 })).map((event) => event.data.n)).toEqual([3, 4]);
      expect((await store.readStream(stream, { afterVersion: 1, limit: 2 })).map((event) => event.data.n)).toEqual([2, 3]);
      expect(await store.readStream(streamOf('nothing'))).toEqual([]);
    });

    it('reads all events in pages that continue from the cursor', async () => {
      const stream = streamOf('all');
      await store.append(
        stream,
        [1, 2, 3].map((n) => ({ type: 'n', data: { n } })),
        { expectedVersion: 0 },
      );
      const seen = await readAllUntil(store, 2, (events) =>
        events.some((event) => event.streamId === stream && event.data.n === 3),
      );
      expect(seen.filter((event) => event.streamId === stream).map((event) => event.data.n)).toEqual([1, 2, 3]);
      expect(new Set(seen.map((event) => event.eventId)).size).toBe(seen.length);
    });

    it('resumes a subscription from its checkpoint', async () => {
      const stream = streamOf('resume');
      const name = `resume-${randomUUID()}`;
      const received: string[] = [];
      const handle = async (events: StoredEvent[]) => {
        for (const event of events) if (event.streamId === stream) received.push(String(event.data.n));
      };
      await store.append(stream, [{ type: 'n', data: { n: 1 } }], { expectedVersion: 0 });
      const first = store.subscribe({ name, handle });
      await eventually(() => received.length === 1, 10_000, 'the first event');
      await first.stop();
      await store.append(stream, [{ type: 'n', data: { n: 2 } }], { expectedVersion: 1 });
      const second = store.subscribe({ name, handle });
      await eventually(() => received.length === 2, 10_000, 'the second event');
      await second.stop();
      expect(received).toEqual(['1', '2']);
    });

    it('hands over only the event types asked for, with their data, and resumes past the others', async () => {
      const stream = streamOf('typed');
      const name = `typed-${randomUUID()}`;
      const received: Array<{ type: string; n: unknown; meta: unknown }> = [];
      const cursors: string[] = [];
      const handle = async (events: StoredEvent[], cursor: string) => {
        cursors.push(cursor);
        for (const event of events) {
          if (event.streamId === stream) received.push({ type: event.type, n: event.data.n, meta: event.metadata.m });
        }
      };
      await store.append(
        stream,
        [
          { type: 'kept', data: { n: 1 }, metadata: { m: 'a' } },
          { type: 'skipped', data: { n: 2 } },
          { type: 'kept', data: { n: 3 }, metadata: { m: 'c' } },
        ],
        { expectedVersion: 0 },
      );
      const first = store.subscribe({ name, handle, eventTypes: ['kept'] });
      await eventually(() => received.length === 2, 10_000, 'the two kept events');
      await first.stop();
      expect(received).toEqual([
        { type: 'kept', n: 1, meta: 'a' },
        { type: 'kept', n: 3, meta: 'c' },
      ]);
      // Events of other types alone still move the checkpoint: a batch of none of the kept type is handed over empty.
      await store.append(stream, [{ type: 'skipped', data: { n: 4 } }], { expectedVersion: 3 });
      const seenBefore = cursors.length;
      const second = store.subscribe({ name, handle, eventTypes: ['kept'] });
      await eventually(() => cursors.length > seenBefore, 10_000, 'a batch for the skipped event');
      await second.stop();
      await store.append(stream, [{ type: 'kept', data: { n: 5 } }], { expectedVersion: 4 });
      const third = store.subscribe({ name, handle, eventTypes: ['kept'] });
      await eventually(() => received.length === 3, 10_000, 'the next kept event');
      await third.stop();
      // Nothing handed over twice after the restarts, nothing of the skipped type.
      expect(received.map((event) => event.n)).toEqual([1, 3, 5]);
    });

    /** Appends these events to a new stream and collects what a subscription with `options` hands over of it. */
    const subscribedTo = async (
      label: string,
      events: NewEvent[],
      options: Pick<SubscribeOptions, 'eventTypes' | 'dataOfTypes'>,
      count: number,
    ) => {
      const stream = streamOf(label);
      const received: StoredEvent[] = [];
      await store.append(stream, events, { expectedVersion: 0 });
      const subscription = store.subscribe({
        name: `${label}-${randomUUID()}`,
        async handle(handed) {
          received.push(...handed.filter((event) => event.streamId === stream));
        },
        ...options,
      });
      await eventually(() => received.length === count, 10_000, `${count} events`);
      await subscription.stop();
      return received;
    };

    it('hands over every event with its metadata, and the data of the types asked for', async () => {
      const received = await subscribedTo(
        'data-typed',
        [
          { type: 'with-data', data: { n: 1 }, metadata: { m: 'a' } },
          { type: 'without-data', data: { n: 2 }, metadata: { m: 'b' } },
          { type: 'with-data', data: { n: 3 }, metadata: { m: 'c' } },
        ],
        { dataOfTypes: ['with-data'] },
        3,
      );
      expect(received.map((event) => [event.type, event.streamVersion, event.metadata.m])).toEqual([
        ['with-data', 1, 'a'],
        ['without-data', 2, 'b'],
        ['with-data', 3, 'c'],
      ]);
      expect(received.filter((event) => event.type === 'with-data').map((event) => event.data)).toEqual([{ n: 1 }, { n: 3 }]);
      // The other type's data: left out ({}) where the adapter can skip reading it, else as stored.
      expect([{}, { n: 2 }]).toContainEqual(received[1]?.data);
      if (fixture.leavesOutData) expect(received[1]?.data).toEqual({});
    });

    it('with eventTypes as well, hands over those types only, and the data of the types both ask for', async () => {
      const received = await subscribedTo(
        'data-and-event-typed',
        [
          { type: 'with-data', data: { n: 1 }, metadata: { m: 'a' } },
          { type: 'not-asked', data: { n: 2 }, metadata: { m: 'b' } },
          { type: 'without-data', data: { n: 3 }, metadata: { m: 'c' } },
        ],
        { eventTypes: ['with-data', 'without-data'], dataOfTypes: ['with-data'] },
        2,
      );
      expect(received.map((event) => [event.type, event.metadata.m])).toEqual([
        ['with-data', 'a'],
        ['without-data', 'c'],
      ]);
      expect(received[0]?.data).toEqual({ n: 1 });
      expect([{}, { n: 3 }]).toContainEqual(received[1]?.data);
      if (fixture.leavesOutData) expect(received[1]?.data).toEqual({});
    });

    it(`delivers every event exactly once, in stream order, while ${options.writers} writers append ${options.totalEvents}, to three subscriptions of different filters at once`, async () => {
      const runId = randomUUID();
      const streamsPerWriter = 5;
      const perWriter = options.totalEvents / options.writers;
      /** What one subscription saw of this run: versions by stream, ids, duplicates, tock events without their data. */
      const follower = () => ({
        seen: new Map<string, number[]>(),
        ids: new Set<string>(),
        duplicates: 0,
        count: 0,
        tocksWithoutData: 0,
      });
      type Follower = ReturnType<typeof follower>;
      const follow = (into: Follower) => async (events: StoredEvent[]) => {
        for (const event of events) {
          if (event.metadata.runId !== runId) continue;
          if (into.ids.has(event.eventId)) into.duplicates++;
          into.ids.add(event.eventId);
          into.count++;
          if (event.type === 'tock' && event.data.runId !== runId) into.tocksWithoutData++;
          const versions = into.seen.get(event.streamId) ?? [];
          versions.push(event.streamVersion);
          into.seen.set(event.streamId, versions);
        }
      };
      // Three subscriptions at once, each its own filter and page size: every event, only the
      // tocks (the SQL store sends their rows and each page's last), and every event with the tocks' data.
      const every = follower();
      const tocks = follower();
      const withTockData = follower();
      const subscriptions = [
        store.subscribe({ name: `concurrency-${runId}`, batchSize: 250, handle: follow(every) }),
        store.subscribe({ name: `concurrency-tocks-${runId}`, batchSize: 100, eventTypes: ['tock'], handle: follow(tocks) }),
        store.subscribe({
          name: `concurrency-data-${runId}`,
          batchSize: 400,
          dataOfTypes: ['tock'],
          handle: follow(withTockData),
        }),
      ];

      let tocksWritten = 0;
      const writer = async (writerIndex: number) => {
        const versions = new Map<string, number>();
        for (let i = 0; i < perWriter; ) {
          const stream = `conc-${runId}-${writerIndex}-${i % streamsPerWriter}`;
          const batch = Math.min(1 + (i % 3), perWriter - i);
          const expectedVersion = versions.get(stream) ?? 0;
          const events = Array.from({ length: batch }, (_, k) => ({
            type: (i + k) % 4 === 0 ? 'tock' : 'tick',
            data: { runId, writerIndex, i: i + k },
            metadata: { runId },
          }));
          const result = await store.append(stream, events, { expectedVersion });
          tocksWritten += events.filter((event) => event.type === 'tock').length;
          versions.set(stream, result.nextExpectedVersion);
          i += batch;
        }
      };
      // Two writers share each stream family, so appends to one stream also race each other.
      const sharedWriter = async () => {
        const stream = `conc-${runId}-shared`;
        for (let i = 0; i < 100; i++)
          await store.append(stream, [{ type: 'tick', data: { runId, i }, metadata: { runId } }], { expectedVersion: 'any' });
      };
      await Promise.all([
        ...Array.from({ length: options.writers }, (_, index) => writer(index)),
        sharedWriter(),
        sharedWriter(),
      ]);
      const expectedTotal = options.totalEvents + 200;

      await eventually(
        () => every.count >= expectedTotal && withTockData.count >= expectedTotal && tocks.count >= tocksWritten,
        60_000,
        `${expectedTotal} events (saw ${every.count} and ${withTockData.count}; ${tocks.count} of ${tocksWritten} tocks)`,
      );
      await Promise.all(subscriptions.map((subscription) => subscription.stop()));

      for (const [label, seen, count] of [
        ['every event', every, expectedTotal],
        ['tocks only', tocks, tocksWritten],
        ['every event, tocks with data', withTockData, expectedTotal],
      ] as const) {
        expect(seen.duplicates, label).toBe(0);
        expect(seen.count, label).toBe(count);
        expect(seen.tocksWithoutData, label).toBe(0);
        for (const [stream, versions] of seen.seen) {
          expect(versions, `${label}: ${stream}`).toEqual([...versions].sort((left, right) => left - right));
          if (seen !== tocks)
            expect(versions, `${label}: ${stream}`).toEqual(Array.from({ length: versions.length }, (_, index) => index + 1));
        }
      }
      expect([...tocks.seen.values()].flat().length).toBe(tocksWritten);
    });

    describe('read models written with the events', () => {
      const table = `read_model_${randomUUID().replaceAll('-', '')}`;
      beforeAll(async () => {
        await fixture.readModels.db.query(`CREATE TABLE ${table} (stream_id text PRIMARY KEY, version integer NOT NULL)`);
      });
      const rowOf = async (stream: string) =>
        (
          await fixture.readModels.db.query<{ version: number }>(`SELECT version FROM ${table} WHERE stream_id = $1`, [stream])
        )[0];

      it('writes them with an append, seeing what was appended', async () => {
        const stream = streamOf('read-model');
        await store.append(
          stream,
          [
            { type: 'a', data: {} },
            { type: 'b', data: {} },
          ],
          {
            expectedVersion: 0,
            readModels: {
              db: fixture.readModels.db,
              write: async (sql, appended) => {
                await sql.query(`INSERT INTO ${table} (stream_id, version) VALUES ($1, $2)`, [
                  stream,
                  appended.nextExpectedVersion,
                ]);
              },
            },
          },
        );
        expect(await rowOf(stream)).toEqual({ version: 2 });
      });

      it('stores no event when the read model refuses, where they share a transaction', async () => {
        if (!fixture.readModels.sharesTransaction) return;
        const stream = streamOf('read-model-refused');
        await store.append(stream, [{ type: 'a', data: {} }], { expectedVersion: 0 });
        await fixture.readModels.db.query(`INSERT INTO ${table} (stream_id, version) VALUES ($1, 1)`, [stream]);
        const refused = store.append(stream, [{ type: 'b', data: {} }], {
          expectedVersion: 1,
          readModels: {
            db: fixture.readModels.db,
            // A stale version of the read model: the guarded update finds no row, and the append must not stand.
            write: async (sql) => {
              const updated = await sql.query(
                `UPDATE ${table} SET version = 2 WHERE stream_id = $1 AND version = 0 RETURNING 1`,
                [stream],
              );
              if (updated.length === 0) throw new Error('the read model moved');
            },
          },
        });
        await expect(refused).rejects.toThrow('the read model moved');
        expect((await store.readStream(stream)).map((event) => event.type)).toEqual(['a']);
        expect(await store.streamVersion(stream)).toBe(1);
        // And the stream takes the next append at the version it really has.
        await store.append(stream, [{ type: 'c', data: {} }], { expectedVersion: 1 });
      });

      it('starts in one statement the streams of the rows an insert stored, and none of the rows it left out', async () => {
        const startStreamsWithRows = store.startStreamsWithRows?.bind(store);
        // Only a store that writes rows with its events has it.
        if (!startStreamsWithRows) return expect(store.atomicReadModels).toBe(false);
        const taken = streamOf('rows-taken');
        await fixture.readModels.db.query(`INSERT INTO ${table} (stream_id, version) VALUES ($1, 0)`, [taken]);
        const fresh = [streamOf('rows-1'), streamOf('rows-2')];
        const insert = (streams: readonly string[]) => ({
          db: fixture.readModels.db,
          text: `INSERT INTO ${table} (stream_id, version) SELECT unnest($1::text[]), 1
                 ON CONFLICT (stream_id) DO NOTHING RETURNING stream_id AS key`,
          params: [streams],
        });
        const stored = await startStreamsWithRows(
          [fresh[0] as string, taken, fresh[1] as string].map((streamId) => ({
            key: streamId,
            streamId,
            events: [
              { type: 'born', data: { streamId } },
              { type: 'grown', data: {} },
            ],
          })),
          insert([fresh[0] as string, taken, fresh[1] as string]),
        );
        expect([...stored].sort()).toEqual([...fresh].sort());
        for (const stream of fresh) {
          expect(await rowOf(stream)).toEqual({ version: 1 });
          const events = await store.readStream(stream);
          expect(events.map((event) => [event.type, event.streamVersion, event.data])).toEqual([
            ['born', 1, { streamId: stream }],
            ['grown', 2, {}],
          ]);
          expect(await store.streamVersion(stream)).toBe(2);
          // The stream goes on from there like any other.
          await store.append(stream, [{ type: 'later', data: {} }], { expectedVersion: 2 });
        }
        // The row the insert left out started nothing.
        expect(await rowOf(taken)).toEqual({ version: 0 });
        expect(await store.readStream(taken)).toEqual([]);
        expect(await store.streamVersion(taken)).toBe(0);
        // Across streams, the events are read in the order they were given.
        const all = await readAllUntil(
          store,
          100_000,
          (events) => events.filter((event) => fresh.includes(event.streamId) && event.type !== 'later').length >= 4,
        );
        const ours = all
          .filter((event) => fresh.includes(event.streamId) && event.type !== 'later')
          .map((event) => [event.streamId, event.type]);
        expect(ours).toEqual([
          [fresh[0], 'born'],
          [fresh[0], 'grown'],
          [fresh[1], 'born'],
          [fresh[1], 'grown'],
        ]);

        // A stream that exists refuses the whole statement: neither rows nor events of the others.
        const another = streamOf('rows-3');
        await expect(
          startStreamsWithRows(
            [another, fresh[0] as string].map((streamId) => ({
              key: `${streamId}-row`,
              streamId,
              events: [{ type: 'born', data: {} }],
            })),
            insert([`${another}-row`, `${fresh[0]}-row`]),
          ),
        ).rejects.toMatchObject({ code: 'CONFLICT', details: { streamId: fresh[0] } });
        expect(await rowOf(`${another}-row`)).toBeUndefined();
        expect(await store.readStream(another)).toEqual([]);
        expect(await store.streamVersion(fresh[0] as string)).toBe(3);
      });

      it('starts streams with their read models, or neither, where they share a transaction', async () => {
        const streams = [streamOf('started-1'), streamOf('started-2')];
        await store.startStreams(
          streams.map((streamId) => ({ streamId, events: [{ type: 'born', data: {} }] })),
          {
            readModels: {
              db: fixture.readModels.db,
              write: async (sql) => {
                for (const stream of streams)
                  await sql.query(`INSERT INTO ${table} (stream_id, version) VALUES ($1, 1)`, [stream]);
              },
            },
          },
        );
        for (const stream of streams) expect(await rowOf(stream)).toEqual({ version: 1 });
        if (!fixture.readModels.sharesTransaction) return;
        const refusedStream = streamOf('started-refused');
        await expect(
          store.startStreams([{ streamId: refusedStream, events: [{ type: 'born', data: {} }] }], {
            readModels: {
              db: fixture.readModels.db,
              // A unique constraint of the read model (a serial taken meanwhile) refuses the whole start.
              write: async (sql) => {
                await sql.query(`INSERT INTO ${table} (stream_id, version) VALUES ($1, 1)`, [streams[0]]);
              },
            },
          }),
        ).rejects.toThrow();
        expect(await store.readStream(refusedStream)).toEqual([]);
        expect(await store.streamVersion(refusedStream)).toBe(0);
      });

      it('packs streams that start with one event each, and reads them as any others: by stream, in pages cut inside a pack, by type', async () => {
        const startStreamsWithRows = store.startStreamsWithRows?.bind(store);
        if (!startStreamsWithRows) return expect(store.atomicReadModels).toBe(false);
        const type = `packed-${randomUUID()}`;
        const streams = Array.from({ length: 250 }, (_, index) => streamOf(`packed-${index}`));
        const insert = (keys: readonly string[]) => ({
          db: fixture.readModels.db,
          text: `INSERT INTO ${table} (stream_id, version) SELECT unnest($1::text[]), 1
                 ON CONFLICT (stream_id) DO NOTHING RETURNING stream_id AS key`,
          params: [keys],
        });
        const startPacked = (ids: readonly string[], keys: readonly string[] = ids) =>
          startStreamsWithRows(
            ids.map((streamId, index) => ({
              key: keys[index] as string,
              streamId,
              events: [{ type, data: { streamId, index }, metadata: { m: index } }],
            })),
            insert(keys),
          );
        expect((await startPacked(streams)).size).toBe(250);
        if (fixture.readModels.sharesTransaction) {
          // The SQL stores: three packs (100, 100, 50), no event rows (migration 0003).
          const packs = await fixture.readModels.db.query<{ size: number }>(
            'SELECT size FROM event_packs WHERE event_type = $1 ORDER BY global_position',
            [type],
          );
          expect(packs.map((pack) => Number(pack.size))).toEqual([100, 100, 50]);
          expect(await fixture.readModels.db.query('SELECT 1 FROM events WHERE event_type = $1', [type])).toEqual([]);
        }

        // By stream: the first event, its version, the newest event; a later append goes on from it.
        const some = [0, 99, 100, 249].map((index) => streams[index] as string);
        for (const [place, stream] of some.entries()) {
          const index = [0, 99, 100, 249][place];
          const [first, ...rest] = await store.readStream(stream);
          expect(rest).toEqual([]);
          expect(first).toMatchObject({
            streamId: stream,
            streamVersion: 1,
            type,
            data: { streamId: stream, index },
            metadata: { m: index },
          });
          expect(await store.readLastEvent(stream)).toEqual(first);
          expect(await store.streamVersion(stream)).toBe(1);
          expect(await store.readStream(stream, { afterVersion: 1 })).toEqual([]);
        }
        const grown = streams[100] as string;
        await expect(store.append(grown, [{ type: 'again', data: {} }], { expectedVersion: 0 })).rejects.toSatisfy(
          isVersionConflict,
        );
        await store.append(grown, [{ type: 'later', data: { n: 2 } }], { expectedVersion: 1 });
        expect((await store.readStream(grown)).map((event) => [event.streamVersion, event.type])).toEqual([
          [1, type],
          [2, 'later'],
        ]);
        expect((await store.readStream(grown, { afterVersion: 1 })).map((event) => event.type)).toEqual(['later']);
        expect(await store.readLastEvent(grown)).toMatchObject({ streamVersion: 2, type: 'later' });
        expect(await store.streamVersion(grown)).toBe(2);

        // A packed stream is not started again, by any way of starting streams; nothing is stored then.
        const fresh = streamOf('packed-fresh');
        await expect(startPacked([fresh, grown], [`${fresh}-row`, `${grown}-again`])).rejects.toMatchObject({
          code: 'CONFLICT',
          details: { streamId: grown },
        });
        await expect(
          store.startStreams([{ streamId: streams[3] as string, events: [{ type: 'again', data: {} }] }]),
        ).rejects.toMatchObject({ code: 'CONFLICT', details: { streamId: streams[3] } });
        await expect(
          startStreamsWithRows(
            [
              {
                key: `${fresh}-two`,
                streamId: streams[4] as string,
                events: [
                  { type: 'a', data: {} },
                  { type: 'b', data: {} },
                ],
              },
            ],
            insert([`${fresh}-two`]),
          ),
        ).rejects.toMatchObject({ code: 'CONFLICT', details: { streamId: streams[4] } });
        // Nor is a stream started as rows started again in a pack.
        const asRows = streamOf('as-rows');
        await store.append(asRows, [{ type: 'born', data: {} }], { expectedVersion: 0 });
        await expect(startPacked([fresh, asRows], [`${fresh}-row2`, `${asRows}-row`])).rejects.toMatchObject({
          code: 'CONFLICT',
          details: { streamId: asRows },
        });
        for (const key of [`${fresh}-row`, `${grown}-again`, `${fresh}-two`, `${fresh}-row2`, `${asRows}-row`]) {
          expect(await rowOf(key)).toBeUndefined();
        }
        expect(await store.readStream(fresh)).toEqual([]);
        expect(await store.streamVersion(asRows)).toBe(1);

        // A row the caller's insert leaves out starts nothing, a packed stream's as any other's:
        // no conflict, and the others' streams start (a keyed retry of codes stored before).
        const beside = streamOf('beside-packed');
        const twoEvents = [
          { type: 'a', data: {} },
          { type: 'b', data: {} },
        ];
        const packedAgain = streams[5] as string;
        const started = await startStreamsWithRows(
          [
            { key: beside, streamId: beside, events: twoEvents },
            { key: packedAgain, streamId: packedAgain, events: twoEvents },
          ],
          insert([beside, packedAgain]),
        );
        expect([...started]).toEqual([beside]);
        expect((await store.readStream(beside)).map((event) => event.type)).toEqual(['a', 'b']);
        expect((await store.readStream(packedAgain)).map((event) => event.type)).toEqual([type]);

        // The log: every packed event once, in the order given, in pages of 7 (cut inside packs).
        const ofType = (events: readonly StoredEvent[]) => events.filter((event) => event.type === type);
        const all = ofType(await readAllUntil(store, 7, (events) => ofType(events).length >= 250));
        expect(all.map((event) => event.streamId)).toEqual(streams);
        expect(new Set(all.map((event) => event.eventId)).size).toBe(250);
        expect(all.every((event) => event.streamVersion === 1)).toBe(true);

        // Subscriptions: of the type, in batches of 30; of another type, past the packs; of every
        // event with the data of another type only.
        const received: StoredEvent[] = [];
        const typed = store.subscribe({
          name: `packed-typed-${randomUUID()}`,
          batchSize: 30,
          eventTypes: [type],
          handle: async (events) => {
            expect(events.length).toBeLessThanOrEqual(30);
            received.push(...events);
          },
        });
        const others: StoredEvent[] = [];
        const after = streamOf('after-packs');
        const other = store.subscribe({
          name: `packed-other-${randomUUID()}`,
          batchSize: 40,
          eventTypes: ['after-packs'],
          handle: async (events) => {
            others.push(...events);
          },
        });
        const metadataOnly: StoredEvent[] = [];
        const withoutData = store.subscribe({
          name: `packed-metadata-${randomUUID()}`,
          batchSize: 45,
          dataOfTypes: ['none'],
          handle: async (events) => {
            metadataOnly.push(...events.filter((event) => event.type === type));
          },
        });
        await store.append(after, [{ type: 'after-packs', data: { last: true } }], { expectedVersion: 0 });
        await eventually(
          () => received.length >= 250 && others.length >= 1 && metadataOnly.length >= 250,
          20_000,
          'the subscriptions',
        );
        await Promise.all([typed.stop(), other.stop(), withoutData.stop()]);
        expect(received.map((event) => event.streamId)).toEqual(streams);
        expect(received[7]).toMatchObject({ data: { index: 7 }, metadata: { m: 7 } });
        expect(others.map((event) => [event.streamId, event.data])).toEqual([[after, { last: true }]]);
        expect(metadataOnly.map((event) => event.streamId)).toEqual(streams);
        if (fixture.leavesOutData) expect(metadataOnly[7]).toMatchObject({ data: {}, metadata: { m: 7 } });
      });
    });
  });
}
