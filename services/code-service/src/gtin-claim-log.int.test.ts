import { listGtinClaims, migrateAccounts, provisionAccount } from '@hallmark/accounts';
import { createSqlEventStore } from '@hallmark/event-store';
import { accountStream } from '@hallmark/provenance';
import { connectTestDatabase, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordGtinClaim, recordGtinClaimGivingWay, recordGtinRevocation } from './gtin-claim-log.ts';

// A claim and its audit event are one write: both or neither (#17, no hand-written undo).
describe('GTIN claims and their events, against PostgreSQL', () => {
  let database: { db: SqlDatabase; drop(): Promise<void> };
  let deps: { db: SqlDatabase; eventStore: Awaited<ReturnType<typeof createSqlEventStore>> };
  let brand: string;
  let rival: string;
  let sandbox: string;
  const now = new Date('2026-11-25T10:00:00Z');

  beforeAll(async () => {
    database = await connectTestDatabase('gtin_claims');
    await migrateAccounts(database.db);
    deps = { db: database.db, eventStore: await createSqlEventStore(database.db) };
    brand = (await provisionAccount(deps, { name: 'Brand', tier: 'enterprise', environment: 'live' }, now)).account.id;
    rival = (await provisionAccount(deps, { name: 'Rival', tier: 'free', environment: 'live' }, now)).account.id;
    sandbox = (await provisionAccount(deps, { name: 'Sandbox', tier: 'free', environment: 'test' }, now)).account.id;
  });

  afterAll(async () => {
    await deps?.eventStore.close();
    await database?.drop();
  });

  const anyone = { accountId: undefined, environments: ['live', 'test'] } as const;

  const eventsOf = async (accountId: string) =>
    // The claims' events (the stream also holds the account's creation and first key).
    (await deps.eventStore.readStream(accountStream({ accountId, environment: 'live' })))
      .filter((event) => event.type.startsWith('gtin.'))
      .map((event) => [event.type, event.data.value]);

  it('stores a grant with its event, and a refused overlapping grant with neither', async () => {
    const claim = await recordGtinClaim(
      deps,
      { accountId: brand, environment: 'live', target: { kind: 'prefix', value: '9506000' }, source: 'granted' },
      'operator',
      now,
    );
    expect((await listGtinClaims(database.db, brand, { limit: 10 })).claims).toEqual([claim]);
    await expect(
      recordGtinClaim(
        deps,
        { accountId: rival, environment: 'live', target: { kind: 'gtin', value: '09506000134352' }, source: 'granted' },
        'operator',
        now,
      ),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    expect((await listGtinClaims(database.db, rival, { limit: 10 })).claims).toEqual([]);
    expect(await eventsOf(rival)).toEqual([]);
    expect(await eventsOf(brand)).toEqual([['gtin.granted', '9506000']]);
  });

  it('records a revocation once, and two racing revocations as one', async () => {
    const claim = await recordGtinClaim(
      deps,
      { accountId: brand, environment: 'live', target: { kind: 'gtin', value: '04006381333931' }, source: 'granted' },
      'operator',
      now,
    );
    const outcomes = await Promise.allSettled([
      recordGtinRevocation(deps, claim.id, anyone, 'operator', now),
      recordGtinRevocation(deps, claim.id, { accountId: brand, environments: ['live'] }, brand, now),
    ]);
    const revoked = outcomes.filter((outcome) => outcome.status === 'fulfilled' && outcome.value?.changed);
    expect(revoked).toHaveLength(1);
    expect(await recordGtinRevocation(deps, claim.id, anyone, 'operator', now)).toMatchObject({ changed: false });
    expect((await eventsOf(brand)).filter(([type]) => type === 'gtin.revoked')).toEqual([['gtin.revoked', '04006381333931']]);
    // Another account's claim is not found, so it cannot be revoked by it; nor is a live claim by a test key.
    expect(await recordGtinRevocation(deps, claim.id, { accountId: rival, environments: ['live'] }, rival, now)).toBeUndefined();
    expect(await recordGtinRevocation(deps, claim.id, { accountId: brand, environments: ['test'] }, brand, now)).toBeUndefined();
  });

  const testEventsOf = async (accountId: string) =>
    (await deps.eventStore.readStream(accountStream({ accountId, environment: 'test' }))).filter((event) =>
      event.type.startsWith('gtin.'),
    );

  it('revokes a sandbox’s overlapping test claims with a live grant, named in the grant’s event', async () => {
    const squatted = await recordGtinClaim(
      deps,
      { accountId: sandbox, environment: 'test', target: { kind: 'prefix', value: '4070071' }, source: 'claimed' },
      sandbox,
      now,
    );
    const later = new Date(now.getTime() + 60_000);
    const { claim, revoked } = await recordGtinClaimGivingWay(
      deps,
      { accountId: rival, environment: 'live', target: { kind: 'gtin', value: '04070071000014' }, source: 'granted' },
      'operator',
      later,
    );
    const asRevoked = { ...squatted, status: 'revoked', revokedAt: later.toISOString() };
    expect(revoked).toEqual([asRevoked]);
    expect((await listGtinClaims(database.db, sandbox, { limit: 10 })).claims).toEqual([asRevoked]);
    expect((await listGtinClaims(database.db, rival, { limit: 10 })).claims).toEqual([claim]);
    // One write: the grant's event names what it revoked; the sandbox's stream holds only its claim.
    const granted = (await deps.eventStore.readStream(accountStream({ accountId: rival, environment: 'live' }))).filter(
      (event) => event.type === 'gtin.granted',
    );
    expect(granted.map((event) => event.data)).toEqual([{ ...claim, by: 'operator', revokes: [asRevoked] }]);
    expect((await testEventsOf(sandbox)).map((event) => event.type)).toEqual(['gtin.claimed']);
  });

  it('looks again when a claim giving way appears between its look and its write', async () => {
    const early = await recordGtinClaim(
      deps,
      { accountId: sandbox, environment: 'test', target: { kind: 'gtin', value: '03017620000010' }, source: 'claimed' },
      sandbox,
      now,
    );
    let appends = 0;
    const racing = {
      ...deps,
      eventStore: Object.assign(Object.create(deps.eventStore), {
        async append(...args: Parameters<typeof deps.eventStore.append>) {
          // Another sandbox claim, made after the grant looked and before its transaction.
          if (++appends === 1) {
            await recordGtinClaim(
              deps,
              { accountId: sandbox, environment: 'test', target: { kind: 'prefix', value: '30176200' }, source: 'claimed' },
              sandbox,
              new Date(now.getTime() + 1_000),
            );
          }
          return deps.eventStore.append(...args);
        },
      }) as typeof deps.eventStore,
    };
    const later = new Date(now.getTime() + 120_000);
    const { claim, revoked } = await recordGtinClaimGivingWay(
      racing,
      { accountId: rival, environment: 'live', target: { kind: 'prefix', value: '3017620' }, source: 'granted' },
      'operator',
      later,
    );
    // Two appends by the grant: the first refused, and rolled back, since it named one claim too few.
    expect(appends).toBe(2);
    expect(revoked.map((other) => other.value)).toEqual(['03017620000010', '30176200']);
    expect(revoked[0]).toEqual({ ...early, status: 'revoked', revokedAt: later.toISOString() });
    const granted = (await deps.eventStore.readStream(accountStream({ accountId: rival, environment: 'live' }))).filter(
      (event) => event.type === 'gtin.granted' && event.data.id === claim.id,
    );
    expect(granted).toHaveLength(1);
    const [event] = granted;
    expect((event?.data.revokes as Array<{ value: string }> | undefined)?.map((other) => other.value)).toEqual([
      '03017620000010',
      '30176200',
    ]);
  });
});
