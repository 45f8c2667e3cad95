import type { AuthenticatedKey } from '@hallmark/accounts';
import { createMemoryCache } from '@hallmark/cache';
import { describe, expect, it } from 'vitest';
import { createRateLimiter, type QuotaThresholdCrossed } from './rate-limiter.ts';

const key: AuthenticatedKey = {
  keyId: 'key_1',
  accountId: 'acc_1',
  environment: 'live',
  scopes: ['*'],
  isOperator: false,
  tier: 'free',
  expiresAt: null,
  restrictions: null,
};

// Days around today: the in-memory cache expires the day's counters by the real clock, so a fixed
// date in the past would find them gone at once.
const today = new Date().toISOString().slice(0, 10);
const tomorrow = new Date(Date.parse(`${today}T00:00:00.000Z`) + 86_400_000).toISOString().slice(0, 10);

describe('quota thresholds for webhooks', () => {
  it('tells of 80% and 100% of a daily quota once each per day, and of 100% when a batch is refused past 80%', async () => {
    const crossed: QuotaThresholdCrossed[] = [];
    let now = new Date(`${today}T10:00:00.000Z`);
    const limiter = createRateLimiter({
      cache: createMemoryCache(),
      clock: () => now,
      onQuotaThreshold: (each) => {
        crossed.push(each);
      },
    });
    const spend = (items: number) => spendKept(limiter, items, 0);
    // free: 100 generations a day.
    await spend(79);
    expect(crossed).toEqual([]);
    await spend(1);
    expect(crossed).toEqual([
      { accountId: 'acc_1', environment: 'live', quota: 'generate', threshold: 80, used: 80, limit: 100, day: today },
    ]);
    await spend(5);
    expect(crossed).toHaveLength(1);
    expect((await spend(50)).allowed).toBe(false);
    expect(crossed.map((each) => each.threshold)).toEqual([80, 100]);
    // What is used, not the limit: the refused 50 were not spent.
    expect(crossed[1]).toMatchObject({ threshold: 100, used: 85, limit: 100 });
    await spend(15);
    expect(crossed).toHaveLength(2);
    now = new Date(`${tomorrow}T00:00:01.000Z`);
    await spend(90);
    expect(crossed.at(-1)).toMatchObject({ threshold: 80, day: tomorrow });
  });

  it('tells a threshold again on the next request past it when the telling failed (compliance-service away)', async () => {
    const told: number[] = [];
    let away = true;
    const limiter = createRateLimiter({
      cache: createMemoryCache(),
      clock: () => new Date(`${today}T10:00:00.000Z`),
      onQuotaThreshold: async (each) => {
        if (away) throw new Error('compliance-service unavailable');
        told.push(each.threshold);
      },
    });
    const spend = (items: number) => spendKept(limiter, items, 0);
    await spend(80);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(told).toEqual([]);
    away = false;
    await spend(1);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(told).toEqual([80]);
    await spend(1);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(told).toEqual([80]);
  });

  it('tells nothing for work given back, nor for a refusal of more than most of the day, and tells the real exhaustion later', async () => {
    const crossed: QuotaThresholdCrossed[] = [];
    const limiter = createRateLimiter({
      cache: createMemoryCache(),
      clock: () => new Date(`${today}T10:00:00.000Z`),
      onQuotaThreshold: (each) => {
        crossed.push(each);
      },
    });
    // A batch of 100 whose every item was refused (a wrong check digit): spent, then all given back.
    await spendKept(limiter, 100, 100);
    // A batch of 101 on a quota with nothing used: larger than the day's quota, refused.
    expect((await spendKept(limiter, 101, 0)).allowed).toBe(false);
    expect(crossed).toEqual([]);
    // 90 kept of a batch of 95: 80% reached, with what is kept.
    await spendKept(limiter, 95, 5);
    expect(crossed.map(({ threshold, used }) => [threshold, used])).toEqual([[80, 90]]);
    await spendKept(limiter, 10, 0);
    expect(crossed.map(({ threshold, used }) => [threshold, used])).toEqual([
      [80, 90],
      [100, 100],
    ]);
  });
});

/** Spends `items` of the generate quota as a request would, and settles it with `refused` of them given back (request-auth's onSend). */
async function spendKept(limiter: ReturnType<typeof createRateLimiter>, items: number, refused: number) {
  const outcome = await limiter.spend(key, { kind: 'generate', per: 'item' }, items);
  if (outcome.quotaSpent) {
    limiter.tellThresholdsKept(outcome.quotaSpent, refused);
    if (refused > 0) await limiter.refund([{ key: outcome.quotaSpent.key, cost: refused }]);
  }
  return outcome;
}
