import type { AuthenticatedKey } from '@hallmark/accounts';
import { createMemoryCache } from '@hallmark/cache';
import { HallmarkError } from '@hallmark/contracts';
import { describe, expect, it } from 'vitest';
import { createRateLimiter, type KeyStop } from './rate-limiter.ts';

const key = (keyId: string): AuthenticatedKey => ({
  keyId,
  accountId: 'acc_1',
  environment: 'live',
  scopes: ['*'],
  isOperator: false,
  tier: 'starter',
  expiresAt: null,
  restrictions: null,
});
const owner = { accountId: 'acc_1', environment: 'live' as const };

describe('stop markers: a key revoked or expired through one gateway, refused by every spend', () => {
  const limiterAt = (now: () => Date) => {
    const asked: Array<[string, KeyStop]> = [];
    const limiter = createRateLimiter({
      cache: createMemoryCache({ now: () => now().getTime() }),
      clock: now,
      refusalOfStoppedKey: async (keyId, stop) => {
        asked.push([keyId, stop]);
        return new HallmarkError(stop, 'read again');
      },
    });
    return { limiter, asked };
  };

  it('refuses the marked key with its stop, spending nothing; the account’s other keys go on', async () => {
    const now = new Date('2026-12-05T10:00:00.000Z');
    const { limiter, asked } = limiterAt(() => now);
    expect((await limiter.spend(key('key_a'), { kind: 'verify', per: 'request' }, 1)).allowed).toBe(true);
    await limiter.markKeyStopped({ ...owner, keyId: 'key_a' }, 'REVOKED_API_KEY');
    await limiter.markKeyStopped({ ...owner, keyId: 'key_b' }, 'EXPIRED_API_KEY');

    const refused = await limiter.spend(key('key_a'), { kind: 'verify', per: 'request' }, 1);
    expect(refused).toMatchObject({ allowed: false, keyRefusal: { code: 'REVOKED_API_KEY' } });
    expect(refused.refusedBy).toBeUndefined();
    expect(await limiter.spendBurst(key('key_b'))).toMatchObject({ allowed: false, keyRefusal: { code: 'EXPIRED_API_KEY' } });
    expect(asked).toEqual([
      ['key_a', 'REVOKED_API_KEY'],
      ['key_b', 'EXPIRED_API_KEY'],
    ]);
    expect((await limiter.spend(key('key_c'), { kind: 'verify', per: 'request' }, 1)).allowed).toBe(true);
    // Only the first request of key_a and key_c's were counted.
    expect(await limiter.readDailyUsage(owner)).toMatchObject({ requests: 2, verify: 2 });
  });

  it('forgets the marker once every cached copy of the key is gone (a minute)', async () => {
    let now = new Date('2026-12-05T10:00:00.000Z');
    const { limiter } = limiterAt(() => now);
    await limiter.markKeyStopped({ ...owner, keyId: 'key_a' }, 'REVOKED_API_KEY');
    now = new Date('2026-12-05T10:00:59.000Z');
    expect((await limiter.spend(key('key_a'), undefined, 1)).allowed).toBe(false);
    now = new Date('2026-12-05T10:01:00.000Z');
    expect((await limiter.spend(key('key_a'), undefined, 1)).allowed).toBe(true);
  });
});
