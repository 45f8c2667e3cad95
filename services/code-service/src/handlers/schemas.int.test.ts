import { migrateAccounts } from '@hallmark/accounts';
import { createSqlEventStore } from '@hallmark/event-store';
import { accountStream } from '@hallmark/provenance';
import { createPgliteDatabase } from '@hallmark/sql';
import { describe, expect, it } from 'vitest';
import { migrateCodes } from '../store/code-store.ts';
import { createSchemaCatalog } from './schemas.ts';

describe('schema changes', () => {
  it('are events in the account’s stream, with each version’s definition', async () => {
    const db = await createPgliteDatabase();
    await migrateAccounts(db); // code-service's migrations read the accounts' tables
    await migrateCodes(db);
    const eventStore = await createSqlEventStore(db);
    const catalog = createSchemaCatalog({ db, eventStore, clock: () => new Date() });
    const owner = { accountId: 'acc_events', environment: 'live' as const };
    const created = await catalog.create(owner, { copyFrom: 'tpl_luxury_goods' });
    await catalog.update(owner, created.id, { name: 'Renamed' });
    await catalog.remove(owner, created.id);
    const events = await eventStore.readStream(accountStream(owner));
    expect(events.map((event) => [event.type, event.data.schemaId, event.data.version])).toEqual([
      ['schema.created', created.id, 1],
      ['schema.updated', created.id, 2],
      ['schema.deleted', created.id, undefined],
    ]);
    expect(events[0]?.data).toMatchObject({ copiedFrom: 'tpl_luxury_goods', vertical: 'luxury' });
    expect(events[1]?.data).toMatchObject({ name: 'Renamed', fields: expect.any(Array) });
    await db.close();
  });

  // A version was kept 10 min by each replica: one that had read it went on validating and generating
  // against a schema another replica had deleted.
  it('are seen by another replica: a version it kept is gone once its schema is deleted', async () => {
    const db = await createPgliteDatabase();
    await migrateAccounts(db);
    await migrateCodes(db);
    const eventStore = await createSqlEventStore(db);
    const replicaA = createSchemaCatalog({ db, eventStore, clock: () => new Date() });
    const replicaB = createSchemaCatalog({ db, eventStore, clock: () => new Date() });
    const owner = { accountId: 'acc_replicas', environment: 'live' as const };
    const created = await replicaA.create(owner, { copyFrom: 'tpl_luxury_goods' });
    expect((await replicaB.get(owner, created.id, 1)).version).toBe(1);
    await replicaA.remove(owner, created.id);
    await expect(replicaB.get(owner, created.id, 1)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await db.close();
  });

  it('tells a schema that is not there from a database that did not answer', async () => {
    const db = await createPgliteDatabase();
    await migrateAccounts(db);
    await migrateCodes(db);
    const eventStore = await createSqlEventStore(db);
    const owner = { accountId: 'acc_unreachable', environment: 'live' as const };
    const created = await createSchemaCatalog({ db, eventStore, clock: () => new Date() }).create(owner, {
      copyFrom: 'tpl_luxury_goods',
    });
    // Another replica, which has read nothing yet.
    const replica = createSchemaCatalog({ db, eventStore, clock: () => new Date() });
    expect(await replica.validateForGeneration(owner, 'sch_none', undefined, {})).toEqual({ missing: true });
    await db.close();
    await expect(replica.validateForGeneration(owner, created.id, undefined, {})).rejects.toThrow();
  });
});
