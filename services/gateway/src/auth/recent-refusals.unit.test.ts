import { describe, expect, it } from 'vitest';
import { createRecentRefusals } from './recent-refusals.ts';

const owner = { accountId: 'acc_1', environment: 'live' };
const generate = { kind: 'generate', per: 'item' } as const;
const verify = { kind: 'verify', per: 'request' } as const;
const state = (remaining: number, resetAtMs: number) => ({
  key: 'rl:test',
  limit: 100,
  used: 100 - remaining,
  remaining,
  resetAtMs,
});

describe('recent refusals', () => {
  it('holds a burst refusal until its second ends, for every route of the account and no other account', () => {
    const refusals = createRecentRefusals();
    refusals.note(owner, 'requests-per-second', state(0, 2_000), 1_500);
    expect(refusals.holding(owner, generate, 1_999)?.refusedBy).toBe('requests-per-second');
    expect(refusals.holding(owner, undefined, 1_999)?.refusedBy).toBe('requests-per-second');
    expect(refusals.holding(owner, generate, 2_000)).toBeUndefined();
    expect(refusals.holding({ accountId: 'acc_1', environment: 'test' }, generate, 1_999)).toBeUndefined();
    expect(refusals.holding({ accountId: 'acc_2', environment: 'live' }, generate, 1_999)).toBeUndefined();
  });

  it('holds a daily quota with nothing left for a second at a time, with some left for the rest of its second, for its own kind only', () => {
    const refusals = createRecentRefusals();
    const endOfDay = 86_400_000;
    // 20 left: a smaller batch would pass, so it is held for the rest of that second only.
    refusals.note(owner, 'generate-per-day', state(20, endOfDay), 1_400);
    expect(refusals.holding(owner, generate, 1_999)).toMatchObject({ refusedBy: 'generate-per-day', partial: true });
    expect(refusals.holding(owner, generate, 2_000)).toBeUndefined();
    // A single generate (one unit, with an Idempotency-Key as the SDK sends it) may fit what is left: not held.
    expect(refusals.holding(owner, { kind: 'generate', per: 'request' }, 1_999)).toBeUndefined();
    refusals.note(owner, 'generate-per-day', state(0, endOfDay), 1_000);
    expect(refusals.holding(owner, generate, 1_999)?.refusedBy).toBe('generate-per-day');
    expect(refusals.holding(owner, verify, 1_999)).toBeUndefined();
    // Looked at again after a second: a refund may have given some back.
    expect(refusals.holding(owner, generate, 2_000)).toBeUndefined();
  });

  it('holds the test environment’s daily requests until the day ends, and ignores counters it does not know', () => {
    const refusals = createRecentRefusals();
    const sandbox = { accountId: 'acc_1', environment: 'test' };
    refusals.note(sandbox, 'test-key-requests-per-day', state(0, 86_400_000), 1_000);
    expect(refusals.holding(sandbox, undefined, 86_399_999)?.refusedBy).toBe('test-key-requests-per-day');
    refusals.note(owner, 'failed-authentications-per-address', state(0, 60_000), 1_000);
    expect(refusals.holding(owner, undefined, 1_001)).toBeUndefined();
  });

  it('keeps at most 10,000 accounts, letting ended refusals go at most once a second when full', () => {
    const refusals = createRecentRefusals();
    for (let i = 0; i < 10_000; i++)
      refusals.note({ accountId: `acc_other_${i}`, environment: 'live' }, 'requests-per-second', state(0, 2_000), 1_500);
    // Full, nothing ended: the next account is not kept.
    refusals.note(owner, 'requests-per-second', state(0, 2_000), 1_600);
    expect(refusals.holding(owner, undefined, 1_700)).toBeUndefined();
    // A second on, the ended ones go and the new one is kept.
    refusals.note(owner, 'requests-per-second', state(0, 3_000), 2_700);
    expect(refusals.holding(owner, undefined, 2_800)?.refusedBy).toBe('requests-per-second');
  });
});
