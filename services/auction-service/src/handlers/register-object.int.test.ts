import {
  createSigningKeyring,
  ensureOperator,
  insertGtinClaim,
  migrateAccounts,
  newGtinClaim,
  provisionAccount,
} from '@hallmark/accounts';
import type { Bus } from '@hallmark/bus';
import { HallmarkError, type Principal } from '@hallmark/contracts';
import { randomHex } from '@hallmark/crypto';
import { createSqlEventStore } from '@hallmark/event-store';
import { objectGtin } from '@hallmark/gs1';
import { connectTestDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idSeedOf } from '../request-ids.ts';
import { newServiceSerial } from '../service-serial.ts';
import { migrateAuction } from '../store/object-store.ts';
import { registerObject, serialSeedOf } from './register-object.ts';

// An object's GTIN holds 11 digits of its serial's hash (objectGtin), so two objects share one about
// once in the first 400,000, and a GTIN is one account's claim: the second registration was a 409
// for good (a keyed retry drew the same serial again), naming the other account's claim. Now it
// draws another serial. The collision is made here by claiming, for another account, the GTIN a
// keyed registration's first serial would get. On the real database.

const noBus = { broadcast: async () => {} } as unknown as Bus;
const body = { title: 'Watch', category: 'watch' as const };

describe('an object whose GTIN is taken (PostgreSQL)', () => {
  let test: Awaited<ReturnType<typeof connectTestDatabase>>;
  let owner: Principal;
  let otherAccountId: string;
  let deps: Parameters<typeof registerObject>[0];

  /** The GTIN the keyed registration's `attempt`-th serial would get. */
  const gtinOfDraw = (requestKey: string, attempt: number) =>
    objectGtin(newServiceSerial(serialSeedOf(idSeedOf('object', requestKey, body), attempt)));
  const claimForOther = (gtin: string) =>
    insertGtinClaim(
      test.db,
      newGtinClaim(
        { accountId: otherAccountId, environment: 'live', target: { kind: 'gtin', value: gtin }, source: 'registered' },
        new Date(),
      ),
      otherAccountId,
    );

  beforeAll(async () => {
    test = await connectTestDatabase('register_object');
    await migrateAccounts(test.db);
    await migrateAuction(test.db);
    const eventStore = await createSqlEventStore(test.db);
    const bootstrap = await ensureOperator({ db: test.db, eventStore }, `svc_live_${'e'.repeat(64)}`, new Date());
    owner = { accountId: bootstrap.accountId, environment: 'live' };
    const other = await provisionAccount(
      { db: test.db, eventStore },
      { name: 'Other house', tier: 'enterprise', environment: 'live' },
      new Date(),
    );
    otherAccountId = other.account.id;
    deps = {
      db: test.db,
      eventStore,
      clock: () => new Date(),
      bus: noBus,
      keyring: createSigningKeyring(test.db, Buffer.from(randomHex(32), 'hex')),
      resolverUrl: 'https://id.example',
    };
  });

  afterAll(async () => {
    await test?.drop();
  });

  it('draws another serial, and a keyed retry finds the object it stored', async () => {
    const taken = gtinOfDraw('key-1', 0);
    await claimForOther(taken);
    const registered = await registerObject(deps, owner, body, 'key-1');
    expect(objectGtin(registered.qr_data.serial)).not.toBe(taken);
    expect(objectGtin(registered.qr_data.serial)).toBe(gtinOfDraw('key-1', 1));
    const claims = await test.db.query<{ account_id: string; value: string; revoked_at: Date | null }>(
      'SELECT account_id, value, revoked_at FROM gtin_claims WHERE value = ANY($1::text[]) ORDER BY created_at',
      [[taken, objectGtin(registered.qr_data.serial)]],
    );
    // The other account's claim stands; the object's GTIN is the registering account's.
    expect(claims).toEqual([
      { account_id: otherAccountId, value: taken, revoked_at: null },
      { account_id: owner.accountId, value: objectGtin(registered.qr_data.serial), revoked_at: null },
    ]);
    // The retry is answered the same object, marked as made before (its quota was spent by the first).
    expect(registered.madeBefore).toBeUndefined();
    expect(await registerObject(deps, owner, body, 'key-1')).toEqual({ ...registered, madeBefore: true });
  });

  it('gives up after five draws with a 409 that names nobody’s claims, having stored nothing', async () => {
    for (let attempt = 0; attempt < 5; attempt += 1) await claimForOther(gtinOfDraw('key-2', attempt));
    const refusal = await registerObject(deps, owner, body, 'key-2').catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(HallmarkError);
    expect(refusal).toMatchObject({ code: 'CONFLICT', details: undefined });
    const id = `obj_${idSeedOf('object', 'key-2', body).subarray(0, 10).toString('hex')}`;
    expect(await test.db.query('SELECT 1 FROM auction_objects WHERE id = $1', [id])).toEqual([]);
    expect(await test.db.query('SELECT 1 FROM event_log WHERE stream_id LIKE $1', [`%${id}%`])).toEqual([]);
  });
});
