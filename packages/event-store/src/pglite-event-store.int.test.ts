import { createPgliteDatabase, type SqlDatabase } from '@hallmark/sql';
import { describe, expect, it } from 'vitest';
import { describeEventStoreContract } from './event-store.contract.ts';
import type { StoredEvent } from './event-store.ts';
import { createSqlEventStore } from './sql-event-store.ts';

describeEventStoreContract('PGlite', async () => {
  const db = await createPgliteDatabase();
  const store = await createSqlEventStore(db, { pollIntervalMs: 50 });
  return {
    store,
    readModels: { db, sharesTransaction: true },
    leavesOutData: true,
    async teardown() {
      await store.close();
      await db.close();
    },
  };
});

// The embedded form's: PGlite in a worker thread behind the same port.
describeEventStoreContract('PGlite in a worker thread', async () => {
  const db = await createPgliteDatabase(undefined, { thread: 'worker' });
  const store = await createSqlEventStore(db, { pollIntervalMs: 50 });
  return {
    store,
    readModels: { db, sharesTransaction: true },
    leavesOutData: true,
    async teardown() {
      await store.close();
      await db.close();
    },
  };
});

describe('a subscription of a few types, on the SQL store', () => {
  it('is sent the rows of its types and one row a page besides, reads on without lingering while it catches up, and its checkpoint passes every event', async () => {
    const db = await createPgliteDatabase();
    // Counts the rows each read of the log brings back (the cost a projection of a few types pays).
    const rowsOfReads: number[] = [];
    const counted: SqlDatabase = {
      ...db,
      async query<Row>(text: string, params?: readonly unknown[]) {
        const rows = await db.query<Row>(text, params);
        if (/last_of_page/.test(text)) rowsOfReads.push(rows.length);
        return rows;
      },
    };
    const store = await createSqlEventStore(counted, { pollIntervalMs: 50 });
    try {
      const others = Array.from({ length: 1_200 }, (_, n) => ({ type: 'other', data: { n } }));
      await store.append('log-1', others.slice(0, 600), { expectedVersion: 0 });
      await store.append('log-1', [{ type: 'wanted', data: { n: 'a' }, metadata: { m: 1 } }], { expectedVersion: 600 });
      await store.append('log-1', others.slice(600), { expectedVersion: 601 });
      await store.append('log-2', [{ type: 'wanted', data: { n: 'b' } }], { expectedVersion: 0 });

      const received: StoredEvent[] = [];
      const cursors: string[] = [];
      // A long linger: a typed page that left events out is not the end of the log, so the
      // subscription must read on at once while it catches up, not linger after each page.
      const subscription = store.subscribe({
        name: 'wanted-only',
        eventTypes: ['wanted'],
        batchSize: 500,
        lingerMs: 10_000,
        handle: async (events, cursor) => {
          received.push(...events);
          cursors.push(cursor);
        },
      });
      const deadline = Date.now() + 5_000;
      while (received.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      await subscription.stop();

      expect(received.map((event) => [event.type, event.data, event.metadata])).toEqual([
        ['wanted', { n: 'a' }, { m: 1 }],
        ['wanted', { n: 'b' }, {}],
      ]);
      // 1,202 events in pages of 500: 500, 500, 202. The first page is 1 row (its last), the second
      // 2 (the wanted one and its last), the third 1 (the last is the wanted one); an empty read after.
      expect(rowsOfReads.slice(0, 3)).toEqual([1, 2, 1]);
      expect(rowsOfReads.slice(3).every((rows) => rows === 0)).toBe(true);
      const all = await store.readAll({ limit: 2_000 });
      expect(cursors.at(-1)).toBe(all.cursor);
    } finally {
      await store.close();
      await db.close();
    }
  });
});
