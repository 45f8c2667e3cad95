import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { describeCacheContract } from './cache.contract.ts';
import { createRedisCache } from './redis-cache.ts';

const url = process.env.HALLMARK_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

describeCacheContract('Redis', async () => createRedisCache({ url, keyPrefix: `test:${randomUUID().slice(0, 8)}:` }));

describe('Redis quota batches', () => {
  const cache = createRedisCache({ url, keyPrefix: `test:${randomUUID().slice(0, 8)}:` });
  const observer = new Redis(url);
  afterAll(async () => {
    await cache.close();
    observer.disconnect();
  });

  /** Script calls Redis has run so far (every client's). */
  const scriptCalls = async () => {
    const stats = await observer.info('commandstats');
    return ['evalsha', 'eval']
      .map((command) => Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0))
      .reduce((sum, calls) => sum + calls, 0);
  };

  it('spends many concurrent requests of one key in a few script calls, not one each', async () => {
    const key = `rl:{${randomUUID()}}:s`;
    await cache.consumeQuotas([{ key, cost: 1, limit: 1_000, resetAtMs: Date.now() + 60_000 }]);
    const before = await scriptCalls();
    const decisions = await Promise.all(
      Array.from({ length: 200 }, () => cache.consumeQuotas([{ key, cost: 1, limit: 1_000, resetAtMs: Date.now() + 60_000 }])),
    );
    const calls = (await scriptCalls()) - before;
    expect(decisions.map((decision) => decision.counters[0]?.used).sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual(
      Array.from({ length: 200 }, (_, index) => index + 2),
    );
    // The first leaves alone; the 199 that arrive while it is in flight leave together. Other
    // tests running at the same time may add a few calls of their own.
    expect(calls).toBeGreaterThanOrEqual(2);
    expect(calls).toBeLessThan(20);
  });

  it('answers every waiting request with the error when Redis fails the call', async () => {
    const broken = createRedisCache({ url: 'redis://127.0.0.1:1', keyPrefix: 'test:' });
    const key = `rl:{${randomUUID()}}:s`;
    const outcomes = await Promise.allSettled(
      Array.from({ length: 5 }, () => broken.consumeQuotas([{ key, cost: 1, limit: 10, resetAtMs: Date.now() + 60_000 }])),
    );
    await broken.close().catch(() => {});
    expect(outcomes.map((outcome) => outcome.status)).toEqual(Array(5).fill('rejected'));
  });
});
