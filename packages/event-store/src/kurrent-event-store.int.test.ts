import { createPgliteDatabase } from '@hallmark/sql';
import { describe } from 'vitest';
import { describeEventStoreContract } from './event-store.contract.ts';
import { loadKurrentEventStore } from './load-kurrent-event-store.ts';

const url = process.env.HALLMARK_ESDB_URL;

if (url) {
  describeEventStoreContract('KurrentDB', async () => {
    // Loaded as the product loads it (its client only when configured).
    const store = await loadKurrentEventStore(url);
    // KurrentDB cannot share a transaction with SQL: read models go to a PGlite database of the test's own.
    const db = await createPgliteDatabase();
    return {
      store,
      readModels: { db, sharesTransaction: false },
      teardown: async () => {
        await store.close();
        await db.close();
      },
    };
  });
} else {
  // Reported, not faked: vitest lists this suite as skipped with the reason in its name.
  describe.skip(`event store contract: KurrentDB — not run: HALLMARK_ESDB_URL is unset and no KurrentDB server can run on this machine`, () => {
    describeEventStoreContract('KurrentDB', async () => {
      throw new Error('unreachable');
    });
  });
}
