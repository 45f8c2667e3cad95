import type { AuthenticatedKey } from '@hallmark/accounts';
import { createMemoryCache } from '@hallmark/cache';
import { describe, expect, it } from 'vitest';
import { createRateLimiter } from './rate-limiter.ts';

const key = (keyId: string, tier: AuthenticatedKey['tier'] = 'starter'): AuthenticatedKey => ({
  keyId,
  accountId: 'acc_1',
  environment: 'live',
  scopes: ['*'],
  isOperator: false,
  tier,
  expiresAt: null,
  restrictions: null,
});

describe('usage counted with the limits', () => {
  it('counts each key’s requests today and this minute, and reads them back without spending', async () => {
    let now = new Date('2026-11-25T10:00:30.000Z');
    const limiter = createRateLimiter({ cache: createMemoryCache({ now: () => now.getTime() }), clock: () => now });
    for (let i = 0; i < 3; i++) await limiter.spend(key('key_a'), undefined, 1);
    await limiter.spend(key('key_b'), { kind: 'verify', per: 'request' }, 1);
    const owner = { accountId: 'acc_1', environment: 'live' as const };
    expect(await limiter.readKeyRequests(owner, ['key_a', 'key_b', 'key_c'])).toEqual(
      new Map([
        ['key_a', { today: 3, thisMinute: 3 }],
        ['key_b', { today: 1, thisMinute: 1 }],
        ['key_c', { today: 0, thisMinute: 0 }],
      ]),
    );
    // Reading spent nothing.
    expect((await limiter.readKeyRequests(owner, ['key_a'])).get('key_a')).toEqual({ today: 3, thisMinute: 3 });
    expect(await limiter.readDailyUsage(owner)).toEqual({
      day: '2026-11-25',
      resetsAtMs: Date.parse('2026-11-26T00:00:00.000Z'),
      requests: 4,
      generate: 0,
      verify: 1,
    });
    now = new Date('2026-11-25T10:01:00.000Z');
    expect((await limiter.readKeyRequests(owner, ['key_a'])).get('key_a')).toEqual({ today: 3, thisMinute: 0 });
    now = new Date('2026-11-26T00:00:00.000Z');
    expect((await limiter.readKeyRequests(owner, ['key_a'])).get('key_a')).toEqual({ today: 0, thisMinute: 0 });
  });

  it('reports and refuses by the limits only: counters that only count never refuse nor show in X-RateLimit', async () => {
    const now = new Date('2026-11-25T10:00:00.000Z');
    const limiter = createRateLimiter({ cache: createMemoryCache({ now: () => now.getTime() }), clock: () => now });
    // Enterprise: no daily quota; the burst (50,000 a second) is what is reported.
    const unlimited = await limiter.spend(key('key_e', 'enterprise'), { kind: 'verify', per: 'request' }, 1);
    expect(unlimited.allowed).toBe(true);
    expect(unlimited.reported.limit).toBe(50_000);
    // Its verifications are still counted for GET /usage.
    expect((await limiter.readDailyUsage({ accountId: 'acc_1', environment: 'live' })).verify).toBe(1);
    // Starter: the verify quota (10,000 a day) is the tightest daily limit.
    const limited = await limiter.spend(key('key_s'), { kind: 'verify', per: 'request' }, 1);
    expect(limited.reported.limit).toBe(10_000);
    expect(limited.quotaSpent).toEqual({ key: expect.stringContaining(':verify'), cost: 1, crossed: [] });
  });
});
