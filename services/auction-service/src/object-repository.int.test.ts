import { createSigningKeyring, ensureOperator, migrateAccounts } from '@hallmark/accounts';
import type { Bus } from '@hallmark/bus';
import type { Principal } from '@hallmark/contracts';
import { randomHex } from '@hallmark/crypto';
import { createSqlEventStore } from '@hallmark/event-store';
import { assetStream } from '@hallmark/provenance';
import { connectTestDatabase, type SqlDatabase, type SqlExecutor } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordProvenanceEvent } from './handlers/record-event.ts';
import { registerObject } from './handlers/register-object.ts';
import { migrateAuction } from './store/object-store.ts';

// An object's change and its read model are one transaction (object-repository.ts, changeObject):
// a process killed between the two can leave neither alone. Here the read model's write fails, as a
// kill or a lost connection would cut it: the event must not be stored without it. Before, the read
// model was written after the append's commit with its failure ignored, and the dashboard stayed
// behind the stream for good (a review of 2026-12-03 killed the product mid-burst: 50 of 102 listed
// objects showed consigned). On the real database.

const noBus = { broadcast: async () => {} } as unknown as Bus;

/** The database, with the read model's upsert failing while `failing.now` is set (in a transaction or not). */
function failingReadModel(db: SqlDatabase, failing: { now: boolean }): SqlDatabase {
  const guard = (sql: SqlExecutor): SqlExecutor => ({
    ...sql,
    query: (text, params) => {
      if (failing.now && /INSERT INTO auction_objects/.test(text)) return Promise.reject(new Error('connection lost'));
      return sql.query(text, params);
    },
  });
  return {
    ...db,
    ...guard(db),
    transaction: (work) => db.transaction((tx) => work(guard(tx))),
    runInOneTrip: undefined,
  } as SqlDatabase;
}

describe('an object’s change and its read model (PostgreSQL)', () => {
  let test: Awaited<ReturnType<typeof connectTestDatabase>>;
  let owner: Principal;

  beforeAll(async () => {
    test = await connectTestDatabase('object_repository');
    await migrateAccounts(test.db);
    await migrateAuction(test.db);
    const bootstrap = await ensureOperator(
      { db: test.db, eventStore: await createSqlEventStore(test.db) },
      `svc_live_${'f'.repeat(64)}`,
      new Date(),
    );
    owner = { accountId: bootstrap.accountId, environment: 'live' };
  });

  afterAll(async () => {
    await test?.drop();
  });

  it('stores an event with its read model or not at all, and the retry stores both', async () => {
    const failing = { now: false };
    const db = failingReadModel(test.db, failing);
    const eventStore = await createSqlEventStore(db);
    const deps = { db, eventStore, clock: () => new Date() };
    const keyring = createSigningKeyring(db, Buffer.from(randomHex(32), 'hex'));
    const registered = await registerObject({ ...deps, bus: noBus, keyring, resolverUrl: 'https://id.example' }, owner, {
      title: 'Watch',
      category: 'watch',
      ownerId: 'o-1',
    });
    const objectId = registered.object.id;
    const listed = { objectId, eventType: 'listed', actorRole: 'auction_house', evidence: { lot: 1 } };
    const record = () => recordProvenanceEvent({ ...deps, evidenceRequiredFor: async () => [] }, owner, listed, 'key-1');

    failing.now = true;
    await expect(record()).rejects.toThrow();
    // Neither half: the stream holds the registration alone, the read model says consigned.
    expect((await eventStore.readStream(assetStream(objectId), { afterVersion: 0, limit: 10 })).map((e) => e.type)).toEqual([
      'registered',
    ]);
    const [before] = await test.db.query<{ status: string; stream_version: number }>(
      'SELECT status, stream_version FROM auction_objects WHERE id = $1',
      [objectId],
    );
    expect(before).toEqual({ status: 'consigned', stream_version: 1 });

    failing.now = false;
    await record();
    const [after] = await test.db.query<{ status: string; stream_version: number }>(
      'SELECT status, stream_version FROM auction_objects WHERE id = $1',
      [objectId],
    );
    expect(after).toEqual({ status: 'listed', stream_version: 2 });
  });
});
