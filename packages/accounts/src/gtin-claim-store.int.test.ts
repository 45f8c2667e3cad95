import type { GtinClaimView } from '@hallmark/contracts';
import { createSqlEventStore } from '@hallmark/event-store';
import { connectTestDatabase, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { provisionAccount } from './account-log.ts';
import {
  findClaimsGivingWay,
  findGtinSigner,
  givesWayTo,
  insertGtinClaim,
  listGtinClaims,
  newGtinClaim,
} from './gtin-claim-store.ts';
import { migrateAccounts } from './migrate.ts';

// A live grant is never blocked by another account's self-service test claims: they give way to it,
// revoked in its transaction (docs/SECURITY.md, "GTIN ownership"). Every other overlap still refuses.
describe('GTIN claims giving way to a live grant, against PostgreSQL', () => {
  let database: { db: SqlDatabase; drop(): Promise<void> };
  let db: SqlDatabase;
  let eventStore: Awaited<ReturnType<typeof createSqlEventStore>>;
  let squatter: string;
  let brand: string;
  let rival: string;
  const day = new Date('2026-12-01T09:00:00Z');
  let clock = 0;
  const next = () => new Date(day.getTime() + ++clock * 1000);

  beforeAll(async () => {
    database = await connectTestDatabase('gtin_claim_store');
    db = database.db;
    await migrateAccounts(db);
    eventStore = await createSqlEventStore(db);
    const account = async (name: string) =>
      (await provisionAccount({ db, eventStore }, { name, tier: 'starter', environment: 'live' }, day)).account.id;
    squatter = await account('Sandbox squatter');
    brand = await account('Brand onboarding late');
    rival = await account('Another brand');
  });

  afterAll(async () => {
    await eventStore?.close();
    await database?.drop();
  });

  const make = (
    accountId: string,
    environment: 'live' | 'test',
    target: { kind: 'gtin' | 'prefix'; value: string },
    source: 'granted' | 'claimed' | 'registered',
  ) => newGtinClaim({ accountId, environment, target, source }, next());
  const store = (claim: GtinClaimView, by = 'operator') => db.transaction((sql) => insertGtinClaim(sql, claim, by));
  const statusOf = async (claim: GtinClaimView) =>
    (await listGtinClaims(db, claim.accountId, { limit: 100 })).claims.find((listed) => listed.id === claim.id);
  const claimsEpoch = async () =>
    Number((await db.query<{ value: string }>(`SELECT value FROM cache_epochs WHERE name = 'gtin_claims'`))[0]?.value);

  it('tells which overlapping claims give way: only self-service test claims, only to a live grant', () => {
    const liveGrant = { source: 'granted', environment: 'live' } as const;
    expect(givesWayTo({ source: 'claimed', environment: 'test' }, liveGrant)).toBe(true);
    for (const existing of [
      { source: 'granted', environment: 'test' },
      { source: 'granted', environment: 'live' },
      { source: 'migrated', environment: 'test' },
      { source: 'registered', environment: 'test' },
    ] as const) {
      expect(givesWayTo(existing, liveGrant)).toBe(false);
    }
    for (const claim of [
      { source: 'granted', environment: 'test' },
      { source: 'claimed', environment: 'test' },
      { source: 'registered', environment: 'live' },
    ] as const) {
      expect(givesWayTo({ source: 'claimed', environment: 'test' }, claim)).toBe(false);
    }
  });

  it('revokes other accounts’ overlapping self-service test claims in a live grant’s write', async () => {
    const squatted = await store(make(squatter, 'test', { kind: 'prefix', value: '7612345' }, 'claimed'), squatter);
    expect(squatted).toEqual([]);
    const squattedGtin = make(squatter, 'test', { kind: 'gtin', value: '07612345000022' }, 'claimed');
    // Its own claims of the same prefix and GTIN do not overlap each other's account: both stand.
    await store(squattedGtin, squatter);
    const [prefixClaim] = (await listGtinClaims(db, squatter, { limit: 100 })).claims.filter((c) => c.value === '7612345');
    if (!prefixClaim) throw new Error('the squatter’s prefix claim was not stored');
    expect((await findGtinSigner(db, 'test', '07612345000015'))?.accountId).toBe(squatter);

    const grant = make(brand, 'live', { kind: 'prefix', value: '7612345' }, 'granted');
    expect((await findClaimsGivingWay(db, grant)).map((claim) => claim.id)).toEqual([prefixClaim.id, squattedGtin.id]);
    const epochBefore = await claimsEpoch();
    const revoked = await store(grant);

    // Both are revoked, at the grant's time, oldest first; the grant is stored; the caches' epoch moved.
    expect(revoked).toEqual([
      { ...prefixClaim, status: 'revoked', revokedAt: grant.createdAt },
      { ...squattedGtin, status: 'revoked', revokedAt: grant.createdAt },
    ]);
    expect(await statusOf(prefixClaim)).toMatchObject({ status: 'revoked', revokedAt: grant.createdAt });
    expect(await statusOf(squattedGtin)).toMatchObject({ status: 'revoked', revokedAt: grant.createdAt });
    expect(await statusOf(grant)).toMatchObject({ status: 'active', environment: 'live', source: 'granted' });
    expect(await claimsEpoch()).toBeGreaterThan(epochBefore);
    const [row] = await db.query<{ revoked_by: string }>('SELECT revoked_by FROM gtin_claims WHERE id = $1', [prefixClaim.id]);
    expect(row?.revoked_by).toBe('operator');
    // The brand signs its GTINs in both environments now.
    expect(await findGtinSigner(db, 'test', '07612345000015')).toEqual({ accountId: brand, owned: true });
    expect(await findGtinSigner(db, 'live', '07612345000022')).toEqual({ accountId: brand, owned: true });
    // And the squatter cannot claim it back in test: the grant covers both environments.
    await expect(
      store(make(squatter, 'test', { kind: 'gtin', value: '07612345000015' }, 'claimed'), squatter),
    ).rejects.toMatchObject({
      code: 'CONFLICT',
      details: { conflictsWith: [{ kind: 'prefix', value: '7612345', environment: 'live' }] },
    });
  });

  it('still refuses a live grant over another account’s granted, registered or live claim, revoking nothing', async () => {
    const squatted = make(squatter, 'test', { kind: 'gtin', value: '05410188000016' }, 'claimed');
    await store(squatted, squatter);
    const blockers = [
      make(rival, 'test', { kind: 'prefix', value: '54101880' }, 'granted'),
      make(rival, 'test', { kind: 'gtin', value: '05410188000016' }, 'registered'),
      make(rival, 'live', { kind: 'prefix', value: '541018800' }, 'granted'),
    ];
    for (const blocker of blockers) {
      // The squatter's claim overlaps the blocker too: each is stored straight, as a migration would.
      await db.query(
        `INSERT INTO gtin_claims (id, account_id, environment, kind, value, source, created_by, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, 'operator', $7)`,
        [blocker.id, blocker.accountId, blocker.environment, blocker.kind, blocker.value, blocker.source, blocker.createdAt],
      );
      const grant = make(brand, 'live', { kind: 'prefix', value: '5410188' }, 'granted');
      await expect(store(grant)).rejects.toMatchObject({
        code: 'CONFLICT',
        // Only what blocks it is named: the claim that would have given way does not.
        details: {
          prefix: '5410188',
          conflictsWith: [{ kind: blocker.kind, value: blocker.value, environment: blocker.environment }],
        },
      });
      expect(await statusOf(squatted)).toMatchObject({ status: 'active', revokedAt: null });
      expect(await statusOf(grant)).toBeUndefined();
      await db.query(`UPDATE gtin_claims SET revoked_at = $2 WHERE id = $1`, [blocker.id, next()]);
    }
  });

  it('still refuses a test grant, and a self-service claim, over another account’s test claim', async () => {
    const squatted = make(squatter, 'test', { kind: 'prefix', value: '8712399' }, 'claimed');
    await store(squatted, squatter);
    for (const claim of [
      make(brand, 'test', { kind: 'gtin', value: '08712399000012' }, 'granted'),
      make(rival, 'test', { kind: 'gtin', value: '08712399000012' }, 'claimed'),
    ]) {
      await expect(store(claim)).rejects.toMatchObject({
        code: 'CONFLICT',
        details: { conflictsWith: [{ kind: 'prefix', value: '8712399', environment: 'test' }] },
      });
      expect(await findClaimsGivingWay(db, claim)).toEqual([]);
    }
    expect(await statusOf(squatted)).toMatchObject({ status: 'active' });
  });
});
