import { randomUUID } from 'node:crypto';
import type { AuthenticatedKey } from '@hallmark/accounts';
import { type Cache, createMemoryCache, createRedisCache } from '@hallmark/cache';
import { afterAll, describe, expect, it } from 'vitest';
import { createRateLimiter } from './rate-limiter.ts';

// A keyed attempt's paid marker (rate-limiter.ts, attemptPaidMarker): set in the same atomic call as
// its spend, and closed by the retry that takes its claim over with nothing noted on the key
// (idempotency.ts, settleUnnotedSpend). Either the attempt spent and the retry learns it, or the
// retry closed the marker first and the attempt's spend is refused whole: never both paid, never
// neither. In memory (the embedded form) and in Redis (the distributed form).

const redisUrl = process.env.HALLMARK_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const redis = createRedisCache({ url: redisUrl, keyPrefix: `test-paid-markers-${randomUUID().slice(0, 8)}:` });
afterAll(() => redis.close());

const caches: Array<[string, () => Cache]> = [
  ['memory', () => createMemoryCache()],
  ['Redis', () => redis],
];

const generate = { kind: 'generate', per: 'item' } as const;

describe.each(caches)('attempt paid markers (%s)', (_name, cacheOf) => {
  const account = () => {
    const accountId = `acc_${randomUUID().slice(0, 8)}`;
    const key: AuthenticatedKey = {
      keyId: `key_${randomUUID().slice(0, 8)}`,
      accountId,
      environment: 'live',
      scopes: ['*'],
      isOperator: false,
      tier: 'starter',
      expiresAt: null,
      restrictions: null,
    };
    const limiter = createRateLimiter({ cache: cacheOf(), clock: () => new Date() });
    return { key, owner: { accountId, environment: 'live' as const }, limiter };
  };

  it('tells the retry that an attempt killed after its spend had paid', async () => {
    const { key, owner, limiter } = account();
    const claim = randomUUID();
    const spent = await limiter.spend(key, generate, 40, 0, claim);
    expect(spent.allowed).toBe(true);
    expect(await limiter.closeAttemptSpend(owner, claim)).toBe(true);
    // Asked again (a second retry): the same answer.
    expect(await limiter.closeAttemptSpend(owner, claim)).toBe(true);
    expect(await limiter.readDailyUsage(owner)).toMatchObject({ generate: 40 });
  });

  it('refuses the spend of an attempt whose claim a retry took over first, spending nothing', async () => {
    const { key, owner, limiter } = account();
    const claim = randomUUID();
    expect(await limiter.closeAttemptSpend(owner, claim)).toBe(false);
    const late = await limiter.spend(key, generate, 40, 0, claim);
    expect(late).toMatchObject({ allowed: false, keyRefusal: { code: 'CONFLICT' } });
    expect(late.quotaSpent).toBeUndefined();
    expect(await limiter.readDailyUsage(owner)).toMatchObject({ requests: 0, generate: 0 });
    // The retry itself (its own claim) spends as usual.
    expect((await limiter.spend(key, generate, 40, 0, randomUUID())).allowed).toBe(true);
    expect(await limiter.readDailyUsage(owner)).toMatchObject({ requests: 1, generate: 40 });
  });

  it('sets no marker for a spend refused by the quota: the retry learns nothing was paid', async () => {
    const { key, owner, limiter } = account();
    const claim = randomUUID();
    // A starter account's day: 1,000 generates.
    const refused = await limiter.spend(key, generate, 1_001, 0, claim);
    expect(refused).toMatchObject({ allowed: false, refusedBy: 'generate-per-day' });
    expect(await limiter.closeAttemptSpend(owner, claim)).toBe(false);
  });

  it('reports the tightest daily limit, not the marker, on an allowed keyed spend', async () => {
    const { key, limiter } = account();
    const spent = await limiter.spend(key, generate, 10, 0, randomUUID());
    expect(spent.reported).toMatchObject({ limit: 1_000, remaining: 990 });
  });
});
