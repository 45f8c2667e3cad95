import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { startSilentLink } from '../../../test/support/silent-link.ts';
import { waitFor } from '../../../test/support/wait.ts';
import { describeCacheContract } from './cache.contract.ts';
import { createRedisCache } from './redis-cache.ts';
import { consumeQuotaBatchScript, createQuotaBatches } from './redis-quota-batches.ts';

const url = process.env.HALLMARK_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

describeCacheContract('Redis', async () => createRedisCache({ url, keyPrefix: `test:${randomUUID().slice(0, 8)}:` }));

describe('Redis quota batches', () => {
  const redis = new Redis(url, { keyPrefix: `test:${randomUUID().slice(0, 8)}:` }) as Redis & {
    consumeQuotaBatch(numberOfKeys: number, ...keysThenArgs: Array<string | number>): Promise<number[]>;
  };
  redis.defineCommand('consumeQuotaBatch', { lua: consumeQuotaBatchScript });
  afterAll(() => redis.disconnect());

  it('spends many concurrent requests of one key in two script calls, not one each', async () => {
    let calls = 0;
    const consume = createQuotaBatches((keys, args) => {
      calls += 1;
      return redis.consumeQuotaBatch(keys.length, ...keys, ...args);
    });
    const key = `rl:{${randomUUID()}}:s`;
    const decisions = await Promise.all(
      Array.from({ length: 200 }, () => consume([{ key, cost: 1, limit: 150, resetAtMs: Date.now() + 60_000 }])),
    );
    // The first leaves at once; the 199 that arrive while it is in flight leave together.
    expect(calls).toBe(2);
    expect(decisions.filter((decision) => decision.allowed).map((decision) => decision.counters[0]?.used)).toEqual(
      Array.from({ length: 150 }, (_, index) => index + 1),
    );
    expect(decisions.slice(150).every((decision) => !decision.allowed && decision.counters[0]?.used === 150)).toBe(true);
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

describe('a Redis that stops answering', () => {
  it('fails each command as an outage within its timeout, spends nothing late, and is used again once it answers', async () => {
    const link = await startSilentLink({ host: '127.0.0.1', port: Number(new URL(url).port || 6379) });
    const cache = createRedisCache({
      url: `redis://127.0.0.1:${link.port}`,
      keyPrefix: `test:${randomUUID().slice(0, 8)}:`,
      commandTimeoutMs: 300,
    });
    const counter = { key: `rl:{${randomUUID()}}:d`, cost: 1, limit: 100, resetAtMs: Date.now() + 60_000 };
    try {
      await cache.set('before', 'answered');
      expect(await cache.get('before')).toBe('answered');

      link.silence();
      const started = performance.now();
      const outcomes = await Promise.allSettled([cache.get('before'), cache.consumeQuotas([counter]), cache.ping()]);
      const waitedMs = performance.now() - started;
      expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected']);
      // The words @hallmark/runtime's isDependencyOutage takes for an outage (503, Retry-After).
      for (const outcome of outcomes)
        expect(String((outcome as PromiseRejectedResult).reason)).toMatch(/Command timed out|Connection is closed/);
      expect(waitedMs).toBeLessThan(1_500);

      link.speak();
      // Back on a new connection; the spend refused as an outage was not sent again behind it.
      await waitFor('the cache answering again', async () =>
        (await cache.get('before').catch(() => undefined)) === 'answered' ? true : undefined,
      );
      const decision = await cache.consumeQuotas([counter]);
      expect(decision.counters[0]?.used).toBe(1);
    } finally {
      await cache.close().catch(() => {});
      await link.close();
    }
  });
});
