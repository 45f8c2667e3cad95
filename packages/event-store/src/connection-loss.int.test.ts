import { randomUUID } from 'node:crypto';
import { createPostgresDatabase, createTestDatabase, type SqlDatabase, type TestDatabase } from '@hallmark/sql';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EventStore, StoredEvent } from './event-store.ts';
import { createSqlEventStore } from './sql-event-store.ts';

// A PostgreSQL failover or restart terminates every connection of the service, the LISTEN
// connection of a running subscription among them. Only this suite's own database is touched.

const waitFor = async (condition: () => boolean, what: string, timeoutMs = 15_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
};

describe('PostgreSQL event store when the database terminates its connections', () => {
  let database: TestDatabase;
  let db: SqlDatabase;
  let store: EventStore;
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => {
    uncaught.push(error);
  };

  beforeAll(async () => {
    database = await createTestDatabase('event_store_loss');
  });
  afterAll(async () => {
    await database.drop();
  });
  beforeEach(async () => {
    uncaught.length = 0;
    process.on('uncaughtException', onUncaught);
    process.on('unhandledRejection', onUncaught);
    db = createPostgresDatabase({ connectionString: database.url, maxConnections: 4 });
    // A poll interval longer than the test: only notifications wake the subscription, so events
    // reach it after the termination only if its LISTEN connection came back.
    store = await createSqlEventStore(db, { pollIntervalMs: 120_000 });
  });
  afterEach(async () => {
    await db.close();
    process.off('uncaughtException', onUncaught);
    process.off('unhandledRejection', onUncaught);
  });

  it('keeps a running subscription delivering events appended after the termination, from its checkpoint', async () => {
    const stream = `loss-${randomUUID()}`;
    const seen: StoredEvent[] = [];
    const errors: unknown[] = [];
    const subscription = store.subscribe({
      name: `loss-${randomUUID()}`,
      async handle(events) {
        seen.push(...events.filter((event) => event.streamId === stream));
      },
      onError: (error) => errors.push(error),
    });
    await store.append(stream, [{ type: 'before', data: {} }], { expectedVersion: 0 });
    await waitFor(() => seen.length === 1, 'the event appended before');

    expect(await database.terminateBackends()).toBeGreaterThanOrEqual(1);
    await new Promise((resolve) => setTimeout(resolve, 300));

    await store.append(stream, [{ type: 'after-1', data: {} }], { expectedVersion: 1 });
    await store.append(stream, [{ type: 'after-2', data: {} }], { expectedVersion: 2 });
    await waitFor(() => seen.length === 3, 'the events appended after the termination');
    await subscription.stop();

    // Each event once, in order: it went on from its checkpoint.
    expect(seen.map((event) => event.type)).toEqual(['before', 'after-1', 'after-2']);
    expect(uncaught).toEqual([]);
  });

  it('an append cut off mid-transaction rejects, and the next append succeeds', async () => {
    const stream = `loss-append-${randomUUID()}`;
    // A competing append holds the stream's lock, so ours waits inside its transaction.
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked!: (pid: number) => void;
    const isLocked = new Promise<number>((resolve) => {
      locked = resolve;
    });
    const blocker = db
      .transaction(async (tx) => {
        const [holder] = await tx.query<{ pid: number }>(
          'SELECT pg_backend_pid() AS pid, pg_advisory_xact_lock(hashtextextended($1, 0))',
          [stream],
        );
        locked(holder?.pid ?? 0);
        await held;
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    const holderPid = await isLocked;
    const cutOff = store.append(stream, [{ type: 'cut-off', data: {} }], { expectedVersion: 0 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    // Cut off only once the append waits for the lock inside its transaction: on a loaded machine its
    // connection can take longer than any fixed pause, and an append that starts after the
    // termination simply succeeds. The waiter is found by the holder it waits for, not by any
    // advisory wait of the database.
    const deadline = Date.now() + 15_000;
    let appendPid: number | undefined;
    for (;;) {
      const [waiting] = await db.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))',
        [holderPid],
      );
      appendPid = waiting?.pid;
      if (appendPid !== undefined) break;
      if (Date.now() > deadline) throw new Error('timed out waiting for the append to wait for the lock');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    // The append's backend first, waiting until it is gone: were the holder's to go first, its
    // lock would pass to the append before the append's own termination.
    const [terminated] = await db.query<{ gone: boolean }>('SELECT pg_terminate_backend($1, 10000) AS gone', [appendPid]);
    expect(terminated?.gone).toBe(true);
    await database.terminateBackends();
    release();
    expect(await cutOff).toBeInstanceOf(Error);
    expect(await blocker).toBeInstanceOf(Error);

    await store.append(stream, [{ type: 'next', data: {} }], { expectedVersion: 0 });
    expect((await store.readStream(stream)).map((event) => event.type)).toEqual(['next']);
    expect(uncaught).toEqual([]);
  });

  it('starts a subscription while the database refuses connections and delivers once it takes them again', async () => {
    const stream = `loss-start-${randomUUID()}`;
    const seen: StoredEvent[] = [];
    await database.allowConnections(false);
    let subscription: ReturnType<EventStore['subscribe']> | undefined;
    try {
      await database.terminateBackends();
      subscription = store.subscribe({
        name: `loss-start-${randomUUID()}`,
        async handle(events) {
          seen.push(...events.filter((event) => event.streamId === stream));
        },
        onError: () => {},
      });
      await new Promise((resolve) => setTimeout(resolve, 500));
    } finally {
      await database.allowConnections(true);
    }
    await store.append(stream, [{ type: 'first', data: {} }], { expectedVersion: 0 });
    await waitFor(() => seen.length === 1, 'the event appended once the database was back');
    await subscription?.stop();
    expect(uncaught).toEqual([]);
  });
});
