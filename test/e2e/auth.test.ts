import { createHash } from 'node:crypto';
import { ed25519PublicKeyObject, generateEd25519KeyPair } from '@hallmark/crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call, startTestProduct, type TestProduct } from '../support/embedded.ts';
import { publicKeyRegistration } from '../support/public-keys.ts';

let t: TestProduct;
let operator: string;
/** Every secret this run saw, to search the logs for at the end. */
const secrets: string[] = [];

const api = <T = Record<string, unknown>>(method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<T>(t.url, method, `/api/v1${path}`, options);

interface CreatedKey {
  id: string;
  secret: string;
  scopes: string[];
  environment: string;
  expiresAt: string | null;
}

async function newTenant(tier: 'free' | 'starter' | 'enterprise', environment: 'live' | 'test' = 'live') {
  const created = await api<{ account: { id: string }; apiKey: CreatedKey }>('POST', '/accounts', {
    key: operator,
    body: { name: `Tenant ${Math.random()}`, tier, environment },
  });
  expect(created.status).toBe(201);
  secrets.push(created.body.apiKey.secret);
  return { accountId: created.body.account.id, key: created.body.apiKey.secret, keyId: created.body.apiKey.id };
}

async function newKey(creator: string, body: Record<string, unknown>): Promise<CreatedKey> {
  const created = await api<CreatedKey>('POST', '/keys', { key: creator, body });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  secrets.push(created.body.secret);
  return created.body;
}

function expectError(response: ApiResponse, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error?.code).toBe(code);
}

beforeAll(async () => {
  t = await startTestProduct();
  if (!t.product.generatedOperatorKey) throw new Error('the embedded start should make an operator key');
  operator = t.product.generatedOperatorKey;
  secrets.push(operator);
});

afterAll(async () => {
  await t?.stop();
});

describe('authentication', () => {
  it('answers MISSING_API_KEY without the header', async () => {
    expectError(await api('GET', '/keys'), 401, 'MISSING_API_KEY');
  });

  it('answers INVALID_API_KEY for a malformed key and for an unknown one', async () => {
    expectError(await api('GET', '/keys', { key: 'svc_live_nope' }), 401, 'INVALID_API_KEY');
    expectError(await api('GET', '/keys', { key: `svc_live_${'0'.repeat(64)}` }), 401, 'INVALID_API_KEY');
  });

  it('answers REVOKED_API_KEY once a key is revoked', async () => {
    const { key } = await newTenant('starter');
    const child = await newKey(key, { name: 'soon revoked', scopes: ['keys:read'] });
    expect((await api('GET', '/keys', { key: child.secret })).status).toBe(200);
    const revoked = await api('POST', `/keys/${child.id}/revoke`, { key });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id: child.id, type: 'api', status: 'revoked' });
    expectError(await api('GET', '/keys', { key: child.secret }), 401, 'REVOKED_API_KEY');
    const again = await api('POST', `/keys/${child.id}/revoke`, { key });
    expect(again.body.revokedAt).toBe(revoked.body.revokedAt);
  });

  it('answers EXPIRED_API_KEY once the clock passes the key’s expiry', async () => {
    const { key } = await newTenant('starter');
    const child = await newKey(key, { name: 'hour', scopes: ['keys:read'], expiresIn: '1h' });
    expect((await api('GET', '/keys', { key: child.secret })).status).toBe(200);
    t.clock.advance(61 * 60_000);
    try {
      expectError(await api('GET', '/keys', { key: child.secret }), 401, 'EXPIRED_API_KEY');
    } finally {
      t.clock.advance(-61 * 60_000);
    }
  });

  it('checks revocation before expiry, as the spec orders them', async () => {
    const { key } = await newTenant('starter');
    const child = await newKey(key, { name: 'both', scopes: ['keys:read'], expiresIn: '1h' });
    await api('POST', `/keys/${child.id}/revoke`, { key });
    t.clock.advance(2 * 3_600_000);
    try {
      expectError(await api('GET', '/keys', { key: child.secret }), 401, 'REVOKED_API_KEY');
    } finally {
      t.clock.advance(-2 * 3_600_000);
    }
  });
});

describe('scopes', () => {
  it('refuses a route outside the key’s scopes with 403, naming required and granted', async () => {
    const { key } = await newTenant('starter');
    const reader = await newKey(key, { name: 'reader', scopes: ['assets:read'] });
    const refused = await api('GET', '/keys', { key: reader.secret });
    expectError(refused, 403, 'INSUFFICIENT_SCOPE');
    expect(refused.body.error?.details).toEqual({ required: 'keys:read', granted: ['assets:read'] });
  });

  it('refuses to let a key grant scopes it lacks', async () => {
    const { key } = await newTenant('starter');
    const limited = await newKey(key, { name: 'limited', scopes: ['keys:write', 'assets:read'] });
    const escalation = await api('POST', '/keys', { key: limited.secret, body: { name: 'more', scopes: ['assets:create'] } });
    expectError(escalation, 403, 'INSUFFICIENT_SCOPE');
    expect(escalation.body.error?.details).toMatchObject({ required: ['assets:create'] });
    expectError(
      await api('POST', '/keys', { key: limited.secret, body: { name: 'all', scopes: ['*'] } }),
      403,
      'INSUFFICIENT_SCOPE',
    );
  });

  it('keeps account provisioning to the operator, whose * a tenant’s * does not match', async () => {
    const { key } = await newTenant('enterprise');
    expectError(await api('POST', '/accounts', { key, body: { name: 'Rogue', tier: 'enterprise' } }), 403, 'INSUFFICIENT_SCOPE');
    expectError(await api('POST', '/keys', { key, body: { name: 'op', scopes: ['accounts:write'] } }), 403, 'INSUFFICIENT_SCOPE');
  });

  it('validates POST /accounts and POST /keys bodies', async () => {
    expectError(
      await api('POST', '/accounts', { key: operator, body: { name: 'X', tier: 'platinum' } }),
      400,
      'VALIDATION_ERROR',
    );
    const { key } = await newTenant('starter');
    const badExpiry = await api('POST', '/keys', { key, body: { name: 'x', scopes: ['keys:read'], expiresIn: '3 months' } });
    expectError(badExpiry, 400, 'VALIDATION_ERROR');
    expect(JSON.stringify(badExpiry.body.error?.details)).toContain('expiresIn');
    expectError(await api('POST', '/keys', { key, body: { name: 'x', scopes: ['assets:fly'] } }), 400, 'VALIDATION_ERROR');
    expectError(await api('POST', '/keys', { key, body: { name: 'x' } }), 400, 'VALIDATION_ERROR');
  });
});

describe('accounts and keys', () => {
  it('shows a secret once and never lists one', async () => {
    const { key } = await newTenant('starter');
    const child = await newKey(key, { name: 'listed', scopes: ['keys:read'], expiresIn: '90d' });
    expect(child.secret).toMatch(/^svc_live_[0-9a-f]{64}$/);
    const listed = await api<{ keys: Array<Record<string, unknown>>; pagination: Record<string, unknown> }>('GET', '/keys', {
      key,
    });
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).not.toContain(child.secret);
    expect(JSON.stringify(listed.body)).not.toContain(key);
    expect(listed.body.keys.find((entry) => entry.id === child.id)).toMatchObject({
      type: 'api',
      name: 'listed',
      status: 'active',
    });
    expect(listed.body.pagination).toMatchObject({ limit: 20, hasMore: false, nextCursor: null });
  });

  it('pages GET /keys with a cursor', async () => {
    const { key } = await newTenant('enterprise');
    for (let i = 0; i < 5; i++) await newKey(key, { name: `k${i}`, scopes: ['keys:read'] });
    const first = await api<{ keys: Array<{ id: string }>; pagination: { nextCursor: string | null; hasMore: boolean } }>(
      'GET',
      '/keys?limit=4',
      { key },
    );
    expect(first.body.keys).toHaveLength(4);
    expect(first.body.pagination.hasMore).toBe(true);
    const second = await api<{ keys: Array<{ id: string }>; pagination: { hasMore: boolean } }>(
      'GET',
      `/keys?limit=4&cursor=${first.body.pagination.nextCursor}`,
      { key },
    );
    expect(second.body.keys).toHaveLength(2);
    expect(second.body.pagination.hasMore).toBe(false);
    expect(new Set([...first.body.keys, ...second.body.keys].map((entry) => entry.id)).size).toBe(6);
    expectError(await api('GET', '/keys?limit=500', { key }), 400, 'VALIDATION_ERROR');
    expectError(await api('GET', '/keys?cursor=garbage', { key }), 400, 'VALIDATION_ERROR');
  });

  it('after a key leaks, lists the keys it made (createdBy) so they can be revoked with it', async () => {
    const { key: owner, keyId: ownerKeyId } = await newTenant('starter');
    const leaked = await newKey(owner, { name: 'CI deploy key', scopes: ['keys:write', 'keys:read', 'assets:verify'] });
    // Whoever holds the leaked key makes keys of its own before the owner notices.
    const planted = await newKey(leaked.secret, { name: 'looks harmless', scopes: ['assets:verify'] });
    const plantedToo = await newKey(leaked.secret, { name: 'backup', scopes: ['keys:read'] });
    const mine = await newKey(owner, { name: 'mine', scopes: ['keys:read'] });
    expect((await api('POST', `/keys/${leaked.id}/revoke`, { key: owner })).status).toBe(200);
    // Revoking the leaked key leaves what it made working (authenticated; refused only for scope):
    // they are listed by their creator.
    expectError(await api('GET', '/keys?limit=1', { key: planted.secret }), 403, 'INSUFFICIENT_SCOPE');
    const made = await api<{ keys: Array<{ id: string; createdBy: string | null }> }>('GET', `/keys?createdBy=${leaked.id}`, {
      key: owner,
    });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    expect(made.body.keys.map((entry) => entry.id).sort()).toEqual([planted.id, plantedToo.id].sort());
    expect(made.body.keys.every((entry) => entry.createdBy === leaked.id)).toBe(true);
    const all = await api<{ keys: Array<{ id: string; createdBy?: string | null }> }>('GET', '/keys?type=api', { key: owner });
    expect(all.body.keys.find((entry) => entry.id === mine.id)?.createdBy).toBe(ownerKeyId);
    // The account's first key was made by the operator's account, not by one of its own keys.
    expect(all.body.keys.find((entry) => entry.id === ownerKeyId)?.createdBy).toBeNull();
    for (const entry of made.body.keys) expect((await api('POST', `/keys/${entry.id}/revoke`, { key: owner })).status).toBe(200);
    expectError(
      await api('POST', '/code/verify', { key: planted.secret, body: { url: 'https://id.example/01/09506000134376/21/X' } }),
      401,
      'REVOKED_API_KEY',
    );
    // Another account's key ids find nothing here.
    const other = await newTenant('starter');
    const none = await api<{ keys: unknown[] }>('GET', `/keys?createdBy=${leaked.id}`, { key: other.key });
    expect(none.body.keys).toEqual([]);
  });

  it('refuses a form-encoded or text body on a route that takes none (415), as a cross-site form would send it', async () => {
    const { key: owner } = await newTenant('starter');
    const victim = await newKey(owner, { name: 'kept', scopes: ['keys:read'] });
    const send = (path: string, contentType: string, body: string) =>
      fetch(`${t.url}/api/v1${path}`, { method: 'POST', headers: { 'x-api-key': owner, 'content-type': contentType }, body });
    for (const [contentType, body] of [
      ['application/x-www-form-urlencoded', 'a=b'],
      ['text/plain', '{"x":1}'],
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\nb\r\n--x--\r\n'],
    ] as const) {
      const refused = await send(`/keys/${victim.id}/revoke`, contentType, body);
      expect(refused.status, contentType).toBe(415);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
      expect((await send('/keys/signing/rotate', contentType, body)).status, contentType).toBe(415);
    }
    // The key was not revoked; with no body, or JSON, the revocation goes through.
    expect((await api('GET', '/keys', { key: victim.secret })).status).toBe(200);
    expect((await api('POST', `/keys/${victim.id}/revoke`, { key: owner })).status).toBe(200);
  });

  it('answers 404 for another account’s key, and leaves it working', async () => {
    const a = await newTenant('starter');
    const b = await newTenant('starter');
    expectError(await api('POST', `/keys/${b.keyId}/revoke`, { key: a.key }), 404, 'NOT_FOUND');
    expect((await api('GET', '/keys', { key: b.key })).status).toBe(200);
    const aKeys = await api<{ keys: Array<{ id: string }> }>('GET', '/keys', { key: a.key });
    expect(aKeys.body.keys.map((entry) => entry.id)).not.toContain(b.keyId);
  });

  it('keeps test and live keys of one account apart', async () => {
    const { key } = await newTenant('starter');
    const sandbox = await newKey(key, { name: 'sandbox', scopes: ['keys:read', 'keys:write'], environment: 'test' });
    const testList = await api<{ keys: Array<{ id: string; environment: string }> }>('GET', '/keys', { key: sandbox.secret });
    expect(testList.body.keys.every((entry) => entry.environment === 'test')).toBe(true);
    expectError(
      await api('POST', '/keys', { key: sandbox.secret, body: { name: 'live', scopes: ['keys:read'], environment: 'live' } }),
      403,
      'INSUFFICIENT_SCOPE',
    );
  });

  it('registers external public keys, refuses what is not Ed25519, and publishes them', async () => {
    const { key, accountId } = await newTenant('starter');
    const pair = generateEd25519KeyPair();
    const registered = await api<{ id: string; type: string }>('POST', '/keys', {
      key,
      body: publicKeyRegistration(pair, { accountId }),
    });
    expect(registered.status).toBe(201);
    expect(registered.body.type).toBe('public');
    const pemPair = generateEd25519KeyPair();
    const pem = ed25519PublicKeyObject(pemPair.publicKey).export({ format: 'pem', type: 'spki' }).toString();
    const pemBody = { ...publicKeyRegistration(pemPair, { accountId }, 'pem'), publicKey: pem };
    expect((await api('POST', '/keys', { key, body: pemBody })).status).toBe(201);
    const bad = await api('POST', '/keys', {
      key,
      body: { ...publicKeyRegistration(generateEd25519KeyPair(), { accountId }, 'bad'), publicKey: 'aGVsbG8' },
    });
    expectError(bad, 400, 'VALIDATION_ERROR');
    expect(JSON.stringify(bad.body.error?.details)).toContain('publicKey');
    expectError(
      await api('POST', '/keys', { key, body: { name: 'rsa', publicKey: 'x', algorithm: 'RS256' } }),
      400,
      'VALIDATION_ERROR',
    );
    const jwks = await call<{ keys: Array<{ kid: string; kty: string; crv: string }> }>(t.url, 'GET', '/.well-known/jwks.json');
    expect(jwks.status).toBe(200);
    expect(jwks.body.keys.find((jwk) => jwk.kid === registered.body.id)).toMatchObject({ kty: 'OKP', crv: 'Ed25519' });
    await api('POST', `/keys/${registered.body.id}/revoke`, { key });
    const after = await call<{ keys: Array<{ kid: string }> }>(t.url, 'GET', '/.well-known/jwks.json');
    expect(after.body.keys.map((jwk) => jwk.kid)).not.toContain(registered.body.id);
  });

  it('rotates the signing key through code-service; both keys stay published; signing keys are not revoked', async () => {
    const { key } = await newTenant('starter');
    const first = await api<{ id: string; status: string }>('POST', '/keys/signing/rotate', { key });
    expect(first.status).toBe(201);
    const second = await api<{ id: string; status: string }>('POST', '/keys/signing/rotate', { key });
    expect(second.body.status).toBe('active');
    const listed = await api<{ keys: Array<{ id: string; status: string }> }>('GET', '/keys?type=signing', { key });
    expect(listed.body.keys.map((entry) => [entry.id, entry.status])).toEqual([
      [second.body.id, 'active'],
      [first.body.id, 'retired'],
    ]);
    const jwks = await call<{ keys: Array<{ kid: string }> }>(t.url, 'GET', '/.well-known/jwks.json');
    expect(jwks.body.keys.map((jwk) => jwk.kid)).toEqual(expect.arrayContaining([first.body.id, second.body.id]));
    expectError(await api('POST', `/keys/${second.body.id}/revoke`, { key }), 409, 'CONFLICT');
  });
});

describe('limits', () => {
  it('puts X-RateLimit headers on every authenticated response', async () => {
    const { key } = await newTenant('starter');
    const response = await api('GET', '/keys', { key });
    expect(Number(response.headers.get('x-ratelimit-limit'))).toBeGreaterThan(0);
    expect(response.headers.get('x-ratelimit-remaining')).not.toBeNull();
    expect(Number(response.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000 - 1);
  });

  it('gives an account’s test environment 100 requests a day, then 429 with Retry-After until 00:00 UTC', async () => {
    const { key } = await newTenant('enterprise');
    const sandbox = await newKey(key, { name: 'sandbox', scopes: ['keys:read'], environment: 'test' });
    const morning = new Date('2031-03-01T08:00:00Z');
    t.clock.freeze(morning);
    try {
      for (let i = 0; i < 100; i++) {
        const response = await api('GET', '/keys', { key: sandbox.secret });
        expect(response.status).toBe(200);
        expect(Number(response.headers.get('x-ratelimit-remaining'))).toBe(99 - i);
      }
      const refused = await api('GET', '/keys', { key: sandbox.secret });
      expectError(refused, 429, 'RATE_LIMITED');
      expect(Number(refused.headers.get('retry-after'))).toBe(16 * 3600);
      expect(Number(refused.headers.get('x-ratelimit-reset'))).toBe(Date.parse('2031-03-02T00:00:00Z') / 1000);
      t.clock.freeze(new Date('2031-03-02T00:00:01Z'));
      expect((await api('GET', '/keys', { key: sandbox.secret })).status).toBe(200);
    } finally {
      t.clock.freeze(undefined);
    }
  });

  it('spends nothing on requests refused for authentication or scope', async () => {
    const { key } = await newTenant('enterprise');
    const sandbox = await newKey(key, { name: 'sandbox', scopes: ['assets:read'], environment: 'test' });
    for (let i = 0; i < 5; i++) expectError(await api('GET', '/keys', { key: sandbox.secret }), 403, 'INSUFFICIENT_SCOPE');
    const counted = await api('POST', '/system/ping/code-service', { key: sandbox.secret, body: {} });
    expect(counted.status).toBe(200);
    expect(counted.headers.get('x-ratelimit-remaining')).toBe('99');
  });

  it('holds each account to its tier’s requests per second', async () => {
    const { key } = await newTenant('free');
    t.clock.freeze(new Date('2031-04-01T10:00:00.100Z'));
    try {
      const responses = await Promise.all(Array.from({ length: 25 }, () => api('GET', '/keys', { key })));
      expect(responses.filter((response) => response.status === 200)).toHaveLength(20);
      const refused = responses.find((response) => response.status === 429);
      expect(refused?.headers.get('retry-after')).toBe('1');
      expect(refused?.body.error?.details).toMatchObject({ limit: 'requests-per-second' });
      t.clock.freeze(new Date('2031-04-01T10:00:01.100Z'));
      expect((await api('GET', '/keys', { key })).status).toBe(200);
    } finally {
      t.clock.freeze(undefined);
    }
  });

  it('checks a key sent to the public ping and counts it against the account; a keyless ping against the address', async () => {
    expectError(await api('POST', '/system/ping/code-service', { key: 'svc_live_bad', body: {} }), 401, 'INVALID_API_KEY');
    const anonymous = await api('POST', '/system/ping/code-service', { body: {} });
    expect(anonymous.status).toBe(200);
    // HALLMARK_PUBLIC_RATE_LIMIT (10 a second per client address).
    expect(anonymous.headers.get('x-ratelimit-limit')).toBe('10');
    const { key } = await newTenant('starter');
    const keyed = await api('POST', '/system/ping/code-service', { key, body: {} });
    expect(keyed.status).toBe(200);
    expect(keyed.headers.get('x-ratelimit-limit')).toBe('200');
  });
});

describe('logs', () => {
  it('never contain a secret, a key hash or the master key', async () => {
    await t.product.log.flush();
    const logs = t.logLines.join('');
    expect(logs.length).toBeGreaterThan(1000);
    for (const secret of secrets) {
      expect(logs).not.toContain(secret);
      expect(logs).not.toContain(secret.slice(9));
      expect(logs).not.toContain(createHash('sha256').update(secret).digest('hex'));
    }
  });
});
