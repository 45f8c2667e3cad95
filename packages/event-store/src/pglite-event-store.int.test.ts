import { createPgliteDatabase } from '@hallmark/sql';
import { describeEventStoreContract } from './event-store.contract.ts';
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
