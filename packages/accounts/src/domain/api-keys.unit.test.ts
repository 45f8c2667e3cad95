import type { Environment, Scope } from '@hallmark/contracts';
import { describe, expect, it } from 'vitest';
import {
  type AccountKeys,
  type ApiKeyCommand,
  type ApiKeyEvent,
  type CreatorFacts,
  type DomainError,
  decide,
  decideEnvironment,
  decideSigningKeyRotation,
  evolve,
  initialAccountKeys,
  isDomainError,
} from './api-keys.ts';
import type { Restrictions } from './key-restrictions.ts';

const T0 = new Date('2026-03-01T10:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const day = 86_400_000;

const issued = (
  keyId: string,
  scopes: Scope[],
  options: {
    environment?: Environment;
    createdBy?: string | null;
    expiresAt?: string | null;
    createdAt?: Date;
    restrictedTo?: string[];
  } = {},
): ApiKeyEvent => ({
  type: 'KeyIssued',
  data: {
    keyId,
    accountId: 'acc_1',
    environment: options.environment ?? 'live',
    name: keyId,
    scopes,
    createdBy: options.createdBy ?? null,
    createdAt: (options.createdAt ?? T0).toISOString(),
    expiresAt: options.expiresAt ?? null,
    ...(options.restrictedTo ? { restrictions: { gtins: options.restrictedTo } } : {}),
  },
});
const revoked = (keyId: string, revokedAt: Date, revokedBy: string | null = 'key_root'): ApiKeyEvent => ({
  type: 'KeyRevoked',
  data: { keyId, revokedAt: revokedAt.toISOString(), revokedBy },
});

const creator = (
  scopes: Scope[],
  options: Omit<Partial<CreatorFacts>, 'restrictions'> & { restrictions?: Restrictions } = {},
): CreatorFacts => ({
  keyId: 'key_root',
  environment: 'live',
  scopes,
  expiresAt: null,
  restrictions: null,
  ...options,
});
const issue = (
  scopes: Scope[],
  by: CreatorFacts | null,
  options: { environment?: Environment; expiresIn?: string; now?: Date; restrictedTo?: string[] } = {},
): ApiKeyCommand => ({
  type: 'IssueKey',
  keyId: 'key_new',
  name: 'key_new',
  scopes,
  creator: by,
  now: options.now ?? T0,
  ...(options.environment ? { environment: options.environment } : {}),
  ...(options.expiresIn !== undefined ? { expiresIn: options.expiresIn } : {}),
  ...(options.restrictedTo ? { restrictions: { gtins: options.restrictedTo } } : {}),
});
const revoke = (
  keyId: string,
  by: { keyId: string; scopes: Scope[]; restrictions?: Restrictions } | null,
  now = at(1000),
  environment: Environment = 'live',
): ApiKeyCommand => ({
  type: 'RevokeKey',
  keyId,
  environment,
  by: by && { restrictions: null, ...by },
  now,
});

/** given(events).when(command).then(events or a refusal): the decider alone, no HTTP, no database. */
function given(events: ApiKeyEvent[], account: { isOperator?: boolean } = {}) {
  const state: AccountKeys = events.reduce(evolve, initialAccountKeys('acc_1', account.isOperator ?? false));
  return {
    state,
    when(command: ApiKeyCommand) {
      const decision = decide(command, state);
      return {
        // biome-ignore lint/suspicious/noThenProperty: the given/when/then spec form; this object is never awaited
        then(expected: ApiKeyEvent[]) {
          expect(decision).toEqual(expected);
        },
        thenRefused(code: DomainError['code'], details: Record<string, unknown> = {}) {
          expect(isDomainError(decision), JSON.stringify(decision)).toBe(true);
          expect(decision).toMatchObject({ code, details });
        },
      };
    },
  };
}

describe('issuing a key', () => {
  it('issues a key with scopes its creator holds, in the creator’s environment, made by the creator', () =>
    given([issued('key_root', ['assets:read', 'keys:write'])])
      .when(issue(['assets:read'], creator(['assets:read', 'keys:write'])))
      .then([issued('key_new', ['assets:read'], { createdBy: 'key_root' })]));

  it('refuses a scope the creator lacks, naming what it lacks and what it holds', () =>
    given([])
      .when(issue(['assets:read', 'assets:create'], creator(['assets:read', 'keys:write'])))
      .thenRefused('INSUFFICIENT_SCOPE', { required: ['assets:create'], granted: ['assets:read', 'keys:write'] }));

  it('grants * only from a key with *', () => {
    given([])
      .when(issue(['*'], creator(['assets:read', 'assets:create', 'keys:write'])))
      .thenRefused('INSUFFICIENT_SCOPE', { required: ['*'] });
    given([])
      .when(issue(['*'], creator(['*'])))
      .then([issued('key_new', ['*'], { createdBy: 'key_root' })]);
  });

  it('grants accounts:write only in the operator’s account, even from *', () => {
    given([])
      .when(issue(['accounts:write'], creator(['*'])))
      .thenRefused('INSUFFICIENT_SCOPE', { required: ['accounts:write'], granted: ['*'] });
    given([], { isOperator: true })
      .when(issue(['accounts:write'], creator(['*'])))
      .then([issued('key_new', ['accounts:write'], { createdBy: 'key_root' })]);
  });

  it('refuses live keys to a test key, and lets a live key make test keys', () => {
    given([])
      .when(issue(['assets:read'], creator(['*'], { environment: 'test' }), { environment: 'live' }))
      .thenRefused('INSUFFICIENT_SCOPE', { required: 'environment:live', granted: 'environment:test' });
    given([])
      .when(issue(['assets:read'], creator(['*']), { environment: 'test' }))
      .then([issued('key_new', ['assets:read'], { environment: 'test', createdBy: 'key_root' })]);
    given([])
      .when(issue(['assets:read'], creator(['*'], { environment: 'test' })))
      .then([issued('key_new', ['assets:read'], { environment: 'test', createdBy: 'key_root' })]);
  });

  it('sets the expiry from expiresIn and the command’s time', () =>
    given([])
      .when(issue(['assets:read'], creator(['*']), { expiresIn: '90d' }))
      .then([issued('key_new', ['assets:read'], { createdBy: 'key_root', expiresAt: at(90 * day).toISOString() })]));

  it.each(['90 days', '0d', '11y', ''])('refuses expiresIn %j, naming the field', (expiresIn) =>
    given([])
      .when(issue(['assets:read'], creator(['*']), { expiresIn }))
      .thenRefused('VALIDATION_ERROR', { fields: [expect.objectContaining({ field: 'expiresIn', in: 'body' })] }),
  );

  it('never lets a new key outlive its creator: no expiry and a later one are capped at the creator’s', () => {
    const creatorExpiry = at(3_600_000);
    given([])
      .when(issue(['assets:read'], creator(['*'], { expiresAt: creatorExpiry })))
      .then([issued('key_new', ['assets:read'], { createdBy: 'key_root', expiresAt: creatorExpiry.toISOString() })]);
    given([])
      .when(issue(['assets:read'], creator(['*'], { expiresAt: creatorExpiry }), { expiresIn: '1d' }))
      .then([issued('key_new', ['assets:read'], { createdBy: 'key_root', expiresAt: creatorExpiry.toISOString() })]);
    given([])
      .when(issue(['assets:read'], creator(['*'], { expiresAt: creatorExpiry }), { expiresIn: '30m' }))
      .then([issued('key_new', ['assets:read'], { createdBy: 'key_root', expiresAt: at(30 * 60_000).toISOString() })]);
  });

  it('from the operator’s tools (no creating key): any scope but accounts:write outside the operator’s account', () => {
    given([])
      .when(issue(['*'], null, { environment: 'test', expiresIn: '1w' }))
      .then([issued('key_new', ['*'], { environment: 'test', expiresAt: at(7 * day).toISOString() })]);
    given([])
      .when(issue(['accounts:write'], null, { environment: 'live' }))
      .thenRefused('INSUFFICIENT_SCOPE', { required: ['accounts:write'] });
    given([], { isOperator: true })
      .when(issue(['*', 'accounts:write'], null, { environment: 'live' }))
      .then([issued('key_new', ['*', 'accounts:write'])]);
    given([])
      .when(issue(['*'], null))
      .thenRefused('VALIDATION_ERROR', { fields: [expect.objectContaining({ field: 'environment' })] });
  });

  it('puts no secret, hash or prefix into the event', () => {
    const decision = decide(issue(['assets:read'], creator(['*'])), initialAccountKeys('acc_1', false));
    expect(isDomainError(decision)).toBe(false);
    expect(Object.keys((decision as ApiKeyEvent[])[0]?.data ?? {}).sort()).toEqual(
      ['accountId', 'createdAt', 'createdBy', 'environment', 'expiresAt', 'keyId', 'name', 'scopes'].sort(),
    );
  });
});

describe('revoking a key', () => {
  const account = [issued('key_root', ['*']), issued('key_reader', ['assets:read', 'keys:write'], { createdBy: 'key_root' })];

  it('revokes a key at the command’s time, by the asking key', () =>
    given(account)
      .when(revoke('key_reader', { keyId: 'key_root', scopes: ['*'] }))
      .then([revoked('key_reader', at(1000))]));

  it('is idempotent: a revoked key gives no new event, and its first revokedAt stands', () => {
    const spec = given([...account, revoked('key_reader', at(1000))]);
    spec.when(revoke('key_reader', { keyId: 'key_root', scopes: ['*'] }, at(5000))).then([]);
    expect(spec.state.keys.get('key_reader')?.revokedAt).toBe(at(1000).toISOString());
    expect(evolve(spec.state, revoked('key_reader', at(9000))).keys.get('key_reader')?.revokedAt).toBe(at(1000).toISOString());
  });

  it('refuses a key whose scopes are not all within the asker’s (a narrow key cannot switch off a stronger one)', () =>
    given(account)
      .when(revoke('key_root', { keyId: 'key_reader', scopes: ['assets:read', 'keys:write'] }))
      .thenRefused('INSUFFICIENT_SCOPE', { required: ['*'], granted: ['assets:read', 'keys:write'] }));

  it('lets a key revoke itself and keys within its scopes', () => {
    given(account)
      .when(revoke('key_reader', { keyId: 'key_reader', scopes: ['assets:read', 'keys:write'] }))
      .then([revoked('key_reader', at(1000), 'key_reader')]);
    given([...account, issued('key_narrow', ['assets:read'])])
      .when(revoke('key_narrow', { keyId: 'key_reader', scopes: ['assets:read', 'keys:write'] }))
      .then([revoked('key_narrow', at(1000), 'key_reader')]);
  });

  it('revokes an accounts:write key only with a key of the operator’s account', () => {
    const operator = [issued('key_root', ['*']), issued('key_admin', ['accounts:write'])];
    given(operator, { isOperator: true })
      .when(revoke('key_admin', { keyId: 'key_root', scopes: ['*'] }))
      .then([revoked('key_admin', at(1000))]);
    given(operator)
      .when(revoke('key_admin', { keyId: 'key_root', scopes: ['*'] }))
      .thenRefused('INSUFFICIENT_SCOPE', { required: ['accounts:write'] });
  });

  it('finds only keys of the asker’s environment and of this account', () => {
    given([...account, issued('key_sandbox', ['assets:read'], { environment: 'test' })])
      .when(revoke('key_sandbox', { keyId: 'key_root', scopes: ['*'] }, at(1000), 'live'))
      .thenRefused('NOT_FOUND', { id: 'key_sandbox' });
    given(account)
      .when(revoke('key_elsewhere', { keyId: 'key_root', scopes: ['*'] }))
      .thenRefused('NOT_FOUND', { id: 'key_elsewhere' });
  });

  it('from the operator’s tools (no asking key): any key of the account', () =>
    given(account)
      .when(revoke('key_root', null))
      .then([revoked('key_root', at(1000), null)]));
});

describe('rules around keys', () => {
  it('rotating the signing key needs a key holding *', () => {
    expect(decideSigningKeyRotation({ scopes: ['*'], isOperator: false })).toBeUndefined();
    expect(decideSigningKeyRotation({ scopes: ['keys:write', 'assets:create'], isOperator: false })).toMatchObject({
      code: 'INSUFFICIENT_SCOPE',
      details: { required: ['*'], granted: ['keys:write', 'assets:create'] },
    });
  });

  it('a test key registers no live keys; a live key registers in either', () => {
    expect(decideEnvironment('test', 'live', 'register')).toMatchObject({ code: 'INSUFFICIENT_SCOPE' });
    expect(decideEnvironment('test', undefined, 'register')).toBe('test');
    expect(decideEnvironment('live', 'test', 'register')).toBe('test');
    expect(decideEnvironment('live', undefined, 'register')).toBe('live');
  });
});

// GTINs with valid check digits (GS1's: weights 3 and 1 from the right).
const gtinA = '04006381333931';
const gtinB = '09506000134352';
const gtinC = '00012345678905';

describe('restricting a key to some GTINs', () => {
  it('keeps each GTIN as its GTIN-14, sorted, once', () =>
    given([])
      .when(
        issue(['assets:verify'], creator(['*']), { restrictedTo: [gtinB, '4006381333931', gtinA.slice(1).padStart(14, '0')] }),
      )
      .then([issued('key_new', ['assets:verify'], { createdBy: 'key_root', restrictedTo: [gtinA, gtinB] })]));

  it('takes a GTIN-8 and a GTIN-12 as their GTIN-14s', () =>
    given([])
      .when(issue(['assets:verify'], creator(['*']), { restrictedTo: ['96385074', '036000291452'] }))
      .then([
        issued('key_new', ['assets:verify'], { createdBy: 'key_root', restrictedTo: ['00000096385074', '00036000291452'] }),
      ]));

  it('refuses a GTIN whose check digit is wrong, naming its place', () =>
    given([])
      .when(issue(['assets:verify'], creator(['*']), { restrictedTo: [gtinA, '04006381333932'] }))
      .thenRefused('VALIDATION_ERROR', {
        fields: [
          { field: 'restrictions.gtins.1', in: 'body', message: 'the check digit is 2, but the first 13 digits call for 1' },
        ],
      }));

  it('lets a restricted key make only keys restricted within its own GTINs', () => {
    const restricted = creator(['*'], { restrictions: { gtins: [gtinA, gtinB] } });
    given([])
      .when(issue(['assets:verify'], restricted, { restrictedTo: [gtinB] }))
      .then([issued('key_new', ['assets:verify'], { createdBy: 'key_root', restrictedTo: [gtinB] })]);
    given([])
      .when(issue(['assets:verify'], restricted))
      .thenRefused('KEY_RESTRICTED', { restrictedTo: { gtins: [gtinA, gtinB] } });
    given([])
      .when(issue(['assets:verify'], restricted, { restrictedTo: [gtinA, gtinC] }))
      .thenRefused('KEY_RESTRICTED', { restrictedTo: { gtins: [gtinA, gtinB] }, beyond: [gtinC] });
  });

  it('lets a restricted key revoke only keys within its own GTINs', () => {
    const keys = [issued('key_wide', ['assets:verify']), issued('key_narrow', ['assets:verify'], { restrictedTo: [gtinA] })];
    const by = { keyId: 'key_root', scopes: ['*'] as Scope[], restrictions: { gtins: [gtinA] } };
    given(keys)
      .when(revoke('key_wide', by))
      .thenRefused('KEY_RESTRICTED', { restrictedTo: { gtins: [gtinA] } });
    given(keys)
      .when(revoke('key_narrow', by))
      .then([{ type: 'KeyRevoked', data: { keyId: 'key_narrow', revokedAt: at(1000).toISOString(), revokedBy: 'key_root' } }]);
  });
});
