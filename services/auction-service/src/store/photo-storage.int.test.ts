import { createSigningKeyring, ensureOperator, migrateAccounts } from '@hallmark/accounts';
import type { Bus } from '@hallmark/bus';
import type { Principal } from '@hallmark/contracts';
import { randomHex } from '@hallmark/crypto';
import { createSqlEventStore, type EventStore } from '@hallmark/event-store';
import { assetStream } from '@hallmark/provenance';
import { connectTestDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerObject } from '../handlers/register-object.ts';
import { migrateAuction } from './object-store.ts';
import { backfillPhotoBytes, photoStorageOf } from './photo-storage.ts';

// Objects registered before auction migration 0005 have no photo_bytes: their photos are counted
// once from the event store at start, so an account's photo storage includes them
// (docs/AUCTION.md, Photos). On the real database.

const noBus = { broadcast: async () => {} } as unknown as Bus;

describe('photo storage of objects from before the limit (PostgreSQL)', () => {
  let test: Awaited<ReturnType<typeof connectTestDatabase>>;
  let eventStore: EventStore;
  let owner: Principal;
  let register: () => Promise<string>;

  beforeAll(async () => {
    test = await connectTestDatabase('photo_storage');
    await migrateAccounts(test.db);
    await migrateAuction(test.db);
    eventStore = await createSqlEventStore(test.db);
    const bootstrap = await ensureOperator({ db: test.db, eventStore }, `svc_live_${'e'.repeat(64)}`, new Date());
    owner = { accountId: bootstrap.accountId, environment: 'live' };
    const keyring = createSigningKeyring(test.db, Buffer.from(randomHex(32), 'hex'));
    const deps = { db: test.db, eventStore, clock: () => new Date(), bus: noBus, keyring, resolverUrl: 'https://id.example' };
    register = async () =>
      (await registerObject(deps, owner, { title: 'Old watch', category: 'watch', ownerId: 'o-1' })).object.id;
  });

  afterAll(async () => {
    await test?.drop();
  });

  /** Appends what a binding of `size` bytes recorded, as a release before the limit did. */
  const bound = (objectId: string, angle: string, size: number) =>
    eventStore.append(
      assetStream(objectId),
      [{ type: 'photographed', data: { angle, sha256: randomHex(32), size, format: 'jpeg', replaced: false } }],
      { expectedVersion: 'any' },
    );

  it('counts every binding of the objects never counted, replaced ones too, and leaves rows counted meanwhile', async () => {
    const [first, second, third, rewritten] = [await register(), await register(), await register(), await register()];
    await bound(first, 'dial', 1_000);
    await bound(first, 'dial', 2_000); // a replacement: its blob is kept, so it counts
    await bound(second, 'case_back', 500);
    // A note recorded as `photographed` (no sha256) binds nothing.
    await eventStore.append(assetStream(second), [{ type: 'photographed', data: { evidence: {}, size: 9_999 } }], {
      expectedVersion: 'any',
    });
    await bound(rewritten, 'dial', 4_000);
    // As before migration 0005; one row was written again by a change of its object (counted then).
    await test.db.query('UPDATE auction_objects SET photo_bytes = NULL WHERE id = ANY($1)', [[first, second, third]]);
    await test.db.query('UPDATE auction_objects SET photo_bytes = 4000 WHERE id = $1', [rewritten]);

    expect((await photoStorageOf(test.db, owner, 10_000)).usedBytes).toBe(4_000);
    expect(await backfillPhotoBytes(test.db, eventStore)).toBe(3);
    const rows = await test.db.query<{ id: string; photo_bytes: string }>(
      'SELECT id, photo_bytes::text FROM auction_objects WHERE id = ANY($1)',
      [[first, second, third, rewritten]],
    );
    const bytes = Object.fromEntries(rows.map((row) => [row.id, Number(row.photo_bytes)]));
    expect(bytes).toEqual({ [first]: 3_000, [second]: 500, [third]: 0, [rewritten]: 4_000 });
    expect(await photoStorageOf(test.db, owner, 10_000)).toEqual({ usedBytes: 7_500, limitBytes: 10_000 });
    // Once every row is counted, a start reads no events.
    expect(await backfillPhotoBytes(test.db, eventStore)).toBe(0);
  });
});
