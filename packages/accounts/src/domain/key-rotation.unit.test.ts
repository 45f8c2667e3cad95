import { describe, expect, it } from 'vitest';
import { decideKeyRotation, type RotatedKeyFacts, type RotateKey } from './key-rotation.ts';

const T0 = new Date('2026-03-01T10:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const hour = 3_600_000;
const day = 24 * hour;

const key = (facts: Partial<RotatedKeyFacts> = {}): RotatedKeyFacts => ({
  id: 'key_old',
  accountId: 'acc_1',
  environment: 'live',
  name: 'production server',
  scopes: ['assets:create', 'assets:read'],
  createdAt: at(-10 * day),
  expiresAt: null,
  revokedAt: null,
  replacedBy: null,
  restrictions: null,
  ...facts,
});
const rotate = (cmd: Partial<RotateKey> = {}): RotateKey => ({
  type: 'RotateKey',
  newKeyId: 'key_new',
  graceSeconds: 3600,
  by: { keyId: 'key_admin', environment: 'live', scopes: ['*'], expiresAt: null, restrictions: null },
  accountIsOperator: false,
  now: T0,
  ...cmd,
});

describe('rotating an API key', () => {
  it('issues a key with the same name, environment and scopes, and ends the old one after the grace', () => {
    const decision = decideKeyRotation(key(), rotate());
    if (!Array.isArray(decision)) throw new Error(decision.message);
    const [issued, rotated] = decision;
    expect(issued.data).toEqual({
      keyId: 'key_new',
      accountId: 'acc_1',
      environment: 'live',
      name: 'production server',
      scopes: ['assets:create', 'assets:read'],
      createdBy: 'key_admin',
      createdAt: T0.toISOString(),
      expiresAt: null,
      replaces: 'key_old',
    });
    expect(rotated.data).toEqual({
      keyId: 'key_old',
      replacedBy: 'key_new',
      graceSeconds: 3600,
      expiresAt: at(hour).toISOString(),
      rotatedBy: 'key_admin',
      rotatedAt: T0.toISOString(),
    });
  });

  it('gives the new key the old one’s lifetime from now, and never past the asker’s expiry', () => {
    const ninetyDays = key({ createdAt: at(-30 * day), expiresAt: at(60 * day) });
    const [issued] = decideKeyRotation(ninetyDays, rotate()) as [{ data: { expiresAt: string } }, unknown];
    expect(issued.data.expiresAt).toBe(at(90 * day).toISOString());
    const shortLivedAsker = rotate({
      by: { keyId: 'key_admin', environment: 'live', scopes: ['*'], expiresAt: at(5 * day), restrictions: null },
    });
    const [capped] = decideKeyRotation(ninetyDays, shortLivedAsker) as [{ data: { expiresAt: string } }, unknown];
    expect(capped.data.expiresAt).toBe(at(5 * day).toISOString());
  });

  it('refuses a key rotating itself with no grace: a lost answer would lock its holder out', () => {
    const self = { keyId: 'key_old', environment: 'live' as const, scopes: ['*' as const], expiresAt: null, restrictions: null };
    expect(decideKeyRotation(key(), rotate({ by: self, graceSeconds: 0 }))).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { fields: [{ field: 'graceSeconds' }] },
    });
    expect(Array.isArray(decideKeyRotation(key(), rotate({ by: self, graceSeconds: 900 })))).toBe(true);
    // The operator's tools (no asking key) and another key may still end it at once.
    expect(Array.isArray(decideKeyRotation(key(), rotate({ by: null, graceSeconds: 0 })))).toBe(true);
  });

  it('ends the old key at once with no grace, and never later than it would have ended anyway', () => {
    const [, now] = decideKeyRotation(key(), rotate({ graceSeconds: 0 })) as [unknown, { data: { expiresAt: string } }];
    expect(now.data.expiresAt).toBe(T0.toISOString());
    const endingSoon = key({ expiresAt: at(10 * 60_000) });
    const [, sooner] = decideKeyRotation(endingSoon, rotate({ graceSeconds: 86400 })) as [
      unknown,
      { data: { expiresAt: string } },
    ];
    expect(sooner.data.expiresAt).toBe(at(10 * 60_000).toISOString());
  });

  it('refuses a key rotated already, in its grace: its expiry is the grace’s end, not its lifetime', () => {
    // Given a key with no expiry, rotated an hour ago with a day's grace (its expiry now the grace's end),
    const replaced = key({ expiresAt: at(23 * hour), replacedBy: 'key_first' });
    // when it is rotated again, the answer is a refusal naming its replacement, not a second
    // replacement that would expire with the grace.
    expect(decideKeyRotation(replaced, rotate())).toMatchObject({
      code: 'CONFLICT',
      details: { id: 'key_old', replacedBy: 'key_first' },
    });
    // A key that may not rotate it learns nothing of its replacement.
    const narrow = rotate({
      by: { keyId: 'key_narrow', environment: 'live', scopes: ['keys:write'], expiresAt: null, restrictions: null },
    });
    expect(decideKeyRotation(replaced, narrow)).toMatchObject({ code: 'INSUFFICIENT_SCOPE' });
  });

  it('refuses a key it cannot see, a revoked or expired one, and one with scopes the asker lacks', () => {
    expect(decideKeyRotation(undefined, rotate())).toMatchObject({ code: 'NOT_FOUND' });
    expect(decideKeyRotation(key({ environment: 'test' }), rotate())).toMatchObject({ code: 'NOT_FOUND' });
    expect(decideKeyRotation(key({ revokedAt: at(-hour) }), rotate())).toMatchObject({ code: 'CONFLICT' });
    expect(decideKeyRotation(key({ expiresAt: T0 }), rotate())).toMatchObject({ code: 'CONFLICT' });
    const narrow = rotate({
      by: {
        keyId: 'key_narrow',
        environment: 'live',
        scopes: ['keys:write', 'assets:read'],
        expiresAt: null,
        restrictions: null,
      },
    });
    expect(decideKeyRotation(key(), narrow)).toMatchObject({
      code: 'INSUFFICIENT_SCOPE',
      details: { required: ['assets:create'], granted: ['keys:write', 'assets:read'] },
    });
  });
});

describe('rotating a restricted key', () => {
  const gtins = ['04006381333931', '09506000134352'];

  it('restricts the new key as the old one was', () => {
    const decision = decideKeyRotation(key({ restrictions: { gtins } }), rotate());
    if (!Array.isArray(decision)) throw new Error(decision.message);
    expect(decision[0].data.restrictions).toEqual({ gtins });
  });

  it('refuses a restricted asker a key that reaches past its GTINs', () => {
    const by = { keyId: 'key_admin', environment: 'live' as const, scopes: ['*' as const], expiresAt: null, restrictions: null };
    expect(decideKeyRotation(key(), rotate({ by: { ...by, restrictions: { gtins } } }))).toMatchObject({
      code: 'KEY_RESTRICTED',
      details: { restrictedTo: { gtins } },
    });
    expect(
      decideKeyRotation(
        key({ restrictions: { gtins } }),
        rotate({ by: { ...by, restrictions: { gtins: [gtins[0] as string] } } }),
      ),
    ).toMatchObject({ code: 'KEY_RESTRICTED', details: { beyond: [gtins[1]] } });
    expect(
      Array.isArray(decideKeyRotation(key({ restrictions: { gtins } }), rotate({ by: { ...by, restrictions: { gtins } } }))),
    ).toBe(true);
  });
});
