import { describe, expect, it } from 'vitest';
import { environmentOfSecret, hashApiKeySecret, newApiKeySecret, secretPrefix } from './api-key-secret.ts';
import { parseExpiresIn } from './expires-in.ts';
import { effectiveScopes, holdsScope, scopesBeyond } from './scope-rules.ts';

describe('API key secrets', () => {
  it('have the spec format, differ every time, and name their environment', () => {
    const live = newApiKeySecret('live');
    expect(live).toMatch(/^svc_live_[0-9a-f]{64}$/);
    expect(newApiKeySecret('live')).not.toBe(live);
    expect(environmentOfSecret(live)).toBe('live');
    expect(environmentOfSecret(newApiKeySecret('test'))).toBe('test');
  });

  it.each([
    '',
    'svc_live_',
    `svc_prod_${'a'.repeat(64)}`,
    `svc_live_${'A'.repeat(64)}`,
    `svc_live_${'a'.repeat(63)}`,
    ` svc_live_${'a'.repeat(64)}`,
  ])('refuses the malformed %j', (secret) => expect(environmentOfSecret(secret)).toBeUndefined());

  it('are stored as SHA-256 and shown by a prefix too short to matter', () => {
    const secret = newApiKeySecret('live');
    expect(hashApiKeySecret(secret)).toMatch(/^[0-9a-f]{64}$/);
    expect(secretPrefix(secret)).toBe(`${secret.slice(0, 13)}…`);
  });
});

describe('parseExpiresIn', () => {
  it.each([
    ['30m', 30 * 60_000],
    ['12h', 12 * 3_600_000],
    ['90d', 90 * 86_400_000],
    ['2w', 14 * 86_400_000],
    ['1y', 365 * 86_400_000],
  ])('reads %s', (text, milliseconds) => expect(parseExpiresIn(text)).toEqual({ ok: true, milliseconds }));

  it.each(['', '90', 'd', '0d', '-1d', '1.5d', '90 d', '90D', '1s', '11y'])('refuses %j with a message', (text) => {
    const result = parseExpiresIn(text);
    expect(result.ok).toBe(false);
  });
});

describe('scope rules', () => {
  it('expands * to every scope but accounts:write, which only the operator gets', () => {
    expect(effectiveScopes(['*'], false).has('accounts:write')).toBe(false);
    expect(effectiveScopes(['*'], true).has('accounts:write')).toBe(true);
    expect(effectiveScopes(['*'], false).has('assets:verify')).toBe(true);
  });

  it('grants only what it holds', () => {
    expect(holdsScope(['assets:read'], false, 'assets:read')).toBe(true);
    expect(holdsScope(['assets:read'], false, 'assets:create')).toBe(false);
    expect(scopesBeyond(['assets:read', 'keys:write'], false, ['assets:read'])).toEqual([]);
    expect(scopesBeyond(['assets:read', 'keys:write'], false, ['assets:read', 'assets:create', '*'])).toEqual([
      'assets:create',
      '*',
    ]);
    expect(scopesBeyond(['*'], false, ['accounts:write'])).toEqual(['accounts:write']);
    expect(scopesBeyond(['*'], true, ['*', 'accounts:write'])).toEqual([]);
  });
});
