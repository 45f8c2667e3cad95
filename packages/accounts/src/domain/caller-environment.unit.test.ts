import { describe, expect, it } from 'vitest';
import { decideGrantEnvironment, decideLiveOnlyAction, gtinClaimReach } from './caller-environment.ts';

const liveOnly = { code: 'INSUFFICIENT_SCOPE', details: { required: 'environment:live', granted: 'environment:test' } };

describe('what a caller’s environment reaches', () => {
  it('lets only a live caller create accounts', () => {
    expect(decideLiveOnlyAction('live', 'create accounts')).toBeUndefined();
    expect(decideLiveOnlyAction('test', 'create accounts')).toMatchObject({
      ...liveOnly,
      message: 'A test key cannot create accounts; use a live key.',
    });
  });

  it('grants in the caller’s environment by default, and never live for a test caller', () => {
    expect(decideGrantEnvironment('live', undefined)).toBe('live');
    expect(decideGrantEnvironment('live', 'test')).toBe('test');
    expect(decideGrantEnvironment('test', undefined)).toBe('test');
    expect(decideGrantEnvironment('test', 'test')).toBe('test');
    expect(decideGrantEnvironment('test', 'live')).toMatchObject(liveOnly);
  });

  it('reaches an account’s own claims of its environment; the operator’s every account’s, live only with a live key', () => {
    expect(gtinClaimReach({ accountId: 'acc_a', environment: 'test' }, false)).toEqual({
      accountId: 'acc_a',
      environments: ['test'],
    });
    expect(gtinClaimReach({ accountId: 'acc_a', environment: 'live' }, false)).toEqual({
      accountId: 'acc_a',
      environments: ['live'],
    });
    expect(gtinClaimReach({ accountId: 'acc_op', environment: 'live' }, true)).toEqual({
      accountId: undefined,
      environments: ['live', 'test'],
    });
    expect(gtinClaimReach({ accountId: 'acc_op', environment: 'test' }, true)).toEqual({
      accountId: undefined,
      environments: ['test'],
    });
  });
});
