import { listGtinClaims, migrateAccounts, provisionAccount } from '@hallmark/accounts';
import { createSqlEventStore } from '@hallmark/event-store';
import { accountStream } from '@hallmark/provenance';
import { connectTestDatabase, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordGtinClaim, recordGtinRevocation } from './gtin-claim-log.ts';

// A claim and its audit event are one write: both or neither (#17, no hand-written undo).
describe('GTIN claims and their events, against PostgreSQL', () => {
  let database: { db: SqlDatabase; drop(): Promise<void> };
  let deps: { db: SqlDatabase; eventStore: Awaited<ReturnType<typeof createSqlEventStore>> };
  let brand: string;
  let rival: string;
  const now = new Date('2026-11-25T10:00:00Z');

  beforeAll(async () => {
    database = await connectTestDatabase('gtin_claims');
    await migrateAccounts(database.db);
    deps = { db: database.db, eventStore: await createSqlEventStore(database.db) };
    brand = (await provisionAccount(deps, { name: 'Brand', tier: 'enterprise', environment: 'live' }, now)).account.id;
    rival = (await provisionAccount(deps, { name: 'Rival', tier: 'free', environment: 'live' }, now)).account.id;
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
});
