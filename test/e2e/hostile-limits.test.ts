// Issue #16, item 4: limits a tenant cannot multiply by minting keys, keys that cannot turn on
// stronger keys, guessing keys that gets slowed down, and public routes that each have a
// per-address limit. Every attack here is made over HTTP, as an outsider or a tenant would.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call, startTestProduct, type TestProduct } from '../support/embedded.ts';

let t: TestProduct;
let operator: string;

const gtin = '09506000134376';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;
const api = <T = Json>(method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<T>(t.url, method, `/api/v1${path}`, options);

function expectError(response: ApiResponse, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error?.code).toBe(code);
}

async function newTenant(tier: 'free' | 'starter' | 'enterprise', environment: 'live' | 'test' = 'live') {
  const created = await api('POST', '/accounts', {
    key: operator,
    body: { name: `Limits ${randomBytes(4).toString('hex')}`, tier, environment },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return {
    accountId: created.body.account.id as string,
    key: created.body.apiKey.secret as string,
    keyId: created.body.apiKey.id as string,
  };
}

async function newKey(creator: string, body: Record<string, unknown>): Promise<{ id: string; secret: string }> {
  const created = await api('POST', '/keys', { key: creator, body });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { id: created.body.id, secret: created.body.secret };
}

/** Runs `body` with the product's clock held at `at`, and lets the clock go afterwards. */
async function at<T>(moment: string, body: () => Promise<T>): Promise<T> {
  t.clock.freeze(new Date(moment));
  try {
    return await body();
  } finally {
    t.clock.freeze(undefined);
  }
}

const unknownKey = () => `svc_live_${randomBytes(32).toString('hex')}`;

beforeAll(async () => {
  t = await startTestProduct();
  if (!t.product.generatedOperatorKey) throw new Error('the embedded start should make an operator key');
  operator = t.product.generatedOperatorKey;
});

afterAll(async () => {
  await t?.stop();
});

describe('limits belong to the account and environment, not to the key', () => {
  it('gives four test keys of one account 100 requests a day in all; the live key keeps its own budget', async () => {
    const { key: live } = await newTenant('starter');
    const sandboxes = await Promise.all(
      [0, 1, 2, 3].map((i) => newKey(live, { name: `sandbox ${i}`, scopes: ['keys:read'], environment: 'test' })),
    );
    await at('2032-01-05T08:00:00Z', async () => {
      for (let i = 0; i < 100; i++) {
        const response = await api('GET', '/keys?limit=1', { key: sandboxes[i % 4]?.secret });
        expect(response.status, JSON.stringify(response.body)).toBe(200);
        // The headers describe the account's test budget, whichever key asked.
        expect(response.headers.get('x-ratelimit-limit')).toBe('100');
        expect(response.headers.get('x-ratelimit-remaining')).toBe(String(99 - i));
      }
      for (const sandbox of sandboxes) {
        const refused = await api('GET', '/keys?limit=1', { key: sandbox.secret });
        expectError(refused, 429, 'RATE_LIMITED');
        expect(refused.body.error?.details).toMatchObject({ limit: 'test-key-requests-per-day' });
        expect(refused.headers.get('retry-after')).toBe(String(16 * 3600));
      }
      // A fifth test key minted now shares the spent budget too.
      const late = await newKey(live, { name: 'late sandbox', scopes: ['keys:read'], environment: 'test' });
      expectError(await api('GET', '/keys?limit=1', { key: late.secret }), 429, 'RATE_LIMITED');
      // The live environment of the same account is another budget.
      expect((await api('GET', '/keys?limit=1', { key: live })).status).toBe(200);
    });
  });

  it('holds all of an account’s keys to one daily generate quota (a batch counts its items)', async () => {
    const tenant = await newTenant('free');
    // GTIN ownership: the operator grants the tenant its GTIN first (the quota is spent either way).
    await api('POST', `/accounts/${tenant.accountId}/gtins`, { key: operator, body: { gtin } });
    const keys = await Promise.all([0, 1, 2].map((i) => newKey(tenant.key, { name: `maker ${i}`, scopes: ['assets:create'] })));
    const batch = (prefix: string, size: number) => ({
      items: Array.from({ length: size }, (_, i) => ({ gtin, serialNumber: `${prefix}-${i}` })),
    });
    await at('2032-01-06T08:00:00Z', async () => {
      const first = await api('POST', '/code/generate/batch', { key: keys[0]?.secret, body: batch('A', 40) });
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      expect(first.headers.get('x-ratelimit-remaining')).toBe('60');
      const second = await api('POST', '/code/generate/batch', { key: keys[1]?.secret, body: batch('B', 40) });
      expect(second.status, JSON.stringify(second.body)).toBe(200);
      expect(second.headers.get('x-ratelimit-remaining')).toBe('20');
      // More than is left is refused whole, and spends nothing.
      const tooMany = await api('POST', '/code/generate/batch', { key: keys[2]?.secret, body: batch('C', 21) });
      expectError(tooMany, 429, 'RATE_LIMITED');
      expect(tooMany.body.error?.details).toMatchObject({ limit: 'generate-per-day' });
      const rest = await api('POST', '/code/generate/batch', { key: tenant.key, body: batch('D', 20) });
      expect(rest.status, JSON.stringify(rest.body)).toBe(200);
      expect(rest.headers.get('x-ratelimit-remaining')).toBe('0');
      for (const key of [...keys.map((k) => k.secret), tenant.key]) {
        const refused = await api('POST', '/code/generate', { key, body: { gtin, serialNumber: `E-${key.slice(-6)}` } });
        expectError(refused, 429, 'RATE_LIMITED');
        expect(refused.body.error?.details).toMatchObject({ limit: 'generate-per-day' });
      }
      // Another account's quota is its own.
      const other = await newTenant('free');
      const theirs = await api('POST', '/code/generate/batch', { key: other.key, body: batch('F', 1) });
      expect(theirs.headers.get('x-ratelimit-remaining')).toBe('99');
    });
  });

  it('holds all of an account’s keys to one per-second burst', async () => {
    const tenant = await newTenant('free');
    const keys = [
      tenant.key,
      ...(await Promise.all([0, 1, 2].map((i) => newKey(tenant.key, { name: `burst ${i}`, scopes: ['keys:read'] })))).map(
        (k) => k.secret,
      ),
    ];
    const other = await newTenant('free');
    await at('2032-01-07T10:00:00.100Z', async () => {
      const responses = await Promise.all(
        Array.from({ length: 40 }, (_, i) => api('GET', '/keys?limit=1', { key: keys[i % 4] })),
      );
      expect(responses.filter((response) => response.status === 200)).toHaveLength(20);
      const refused = responses.filter((response) => response.status === 429);
      expect(refused).toHaveLength(20);
      expect(refused[0]?.body.error?.details).toMatchObject({ limit: 'requests-per-second' });
      expect(refused[0]?.headers.get('retry-after')).toBe('1');
      expect((await api('GET', '/keys?limit=1', { key: other.key })).status).toBe(200);
    });
  });
});

describe('a key manages only keys within its own scopes', () => {
  it('refuses to revoke a key with scopes the caller lacks, and the key keeps working', async () => {
    const { key: owner, keyId: ownerId } = await newTenant('starter');
    const manager = await newKey(owner, { name: 'manager', scopes: ['keys:write'] });
    const rich = await newKey(owner, { name: 'rich', scopes: ['assets:create', 'keys:read', 'keys:write'] });
    const refused = await api('POST', `/keys/${rich.id}/revoke`, { key: manager.secret });
    expectError(refused, 403, 'INSUFFICIENT_SCOPE');
    expect(refused.body.error?.details).toEqual({ required: ['assets:create', 'keys:read'], granted: ['keys:write'] });
    const all = await api('POST', `/keys/${ownerId}/revoke`, { key: manager.secret });
    expectError(all, 403, 'INSUFFICIENT_SCOPE');
    expect(all.body.error?.details).toEqual({ required: ['*'], granted: ['keys:write'] });
    expect((await api('GET', '/keys', { key: rich.secret })).status).toBe(200);
    expect((await api('GET', '/keys', { key: owner })).status).toBe(200);
    // Nor can it make stronger keys.
    expectError(
      await api('POST', '/keys', { key: manager.secret, body: { name: 'stronger', scopes: ['keys:write', 'assets:read'] } }),
      403,
      'INSUFFICIENT_SCOPE',
    );
  });

  it('revokes keys within its scopes, itself included; a * key revokes any key of its account', async () => {
    const { key: owner } = await newTenant('starter');
    const manager = await newKey(owner, { name: 'manager', scopes: ['keys:write', 'keys:read'] });
    const peer = await newKey(owner, { name: 'peer', scopes: ['keys:read'] });
    const rich = await newKey(owner, { name: 'rich', scopes: ['assets:create'] });
    expect((await api('POST', `/keys/${peer.id}/revoke`, { key: manager.secret })).status).toBe(200);
    expectError(await api('GET', '/keys', { key: peer.secret }), 401, 'REVOKED_API_KEY');
    expect((await api('POST', `/keys/${rich.id}/revoke`, { key: owner })).status).toBe(200);
    expect((await api('POST', `/keys/${manager.id}/revoke`, { key: manager.secret })).status).toBe(200);
    expectError(await api('GET', '/keys', { key: manager.secret }), 401, 'REVOKED_API_KEY');
  });

  it('lets only a key holding * rotate the account’s signing key', async () => {
    const { key: owner } = await newTenant('starter');
    const manager = await newKey(owner, { name: 'manager', scopes: ['keys:write', 'keys:read', 'assets:create'] });
    const refused = await api('POST', '/keys/signing/rotate', { key: manager.secret });
    expectError(refused, 403, 'INSUFFICIENT_SCOPE');
    expect(refused.body.error?.details).toEqual({ required: ['*'], granted: ['keys:write', 'keys:read', 'assets:create'] });
    const signing = await api('GET', '/keys?type=signing', { key: owner });
    expect(signing.body.keys).toEqual([]);
    expect((await api('POST', '/keys/signing/rotate', { key: owner })).status).toBe(201);
  });
});

describe('failed authentication is throttled per client address', () => {
  it('answers 429 with Retry-After to bad keys after 20 failures a minute, never to a valid key', async () => {
    const { key: owner } = await newTenant('starter');
    const revoked = await newKey(owner, { name: 'revoked', scopes: ['keys:read'] });
    await api('POST', `/keys/${revoked.id}/revoke`, { key: owner });
    // Expires long before the moment below.
    const expired = await newKey(owner, { name: 'expired', scopes: ['keys:read'], expiresIn: '1h' });
    await at('2032-01-08T09:00:10Z', async () => {
      const bad = [revoked.secret, expired.secret, 'svc_live_nope', ...Array.from({ length: 17 }, unknownKey)];
      for (const key of bad) {
        const response = await api('GET', '/keys', { key });
        expect(response.status, JSON.stringify(response.body)).toBe(401);
      }
      for (const key of [unknownKey(), revoked.secret, expired.secret, 'svc_test_x']) {
        const refused = await api('GET', '/keys', { key });
        expectError(refused, 429, 'RATE_LIMITED');
        expect(refused.headers.get('retry-after')).toBe('50');
        expect(refused.body.error?.details).toMatchObject({ limit: 'failed-authentications-per-address', retryAfterSeconds: 50 });
      }
      // The public ping with a bad key is throttled too.
      expectError(await api('POST', '/system/ping/code-service', { key: unknownKey(), body: {} }), 429, 'RATE_LIMITED');
      // A valid key from the same address is served; a request without a key is told to send one.
      expect((await api('GET', '/keys', { key: owner })).status).toBe(200);
      expectError(await api('GET', '/keys'), 401, 'MISSING_API_KEY');
    });
    // The next minute starts afresh.
    await at('2032-01-08T09:01:00Z', async () => {
      expectError(await api('GET', '/keys', { key: unknownKey() }), 401, 'INVALID_API_KEY');
    });
  });
});

describe('every public endpoint is limited per client address', () => {
  const publicRequests: Array<[string, () => Promise<Response>]> = [
    ['the ping without a key', () => fetch(`${t.url}/api/v1/system/ping/code-service`, { method: 'POST' })],
    [
      'a resolver page',
      () => fetch(`${t.url}/01/${gtin}/21/NOPE?sig=${'A'.repeat(86)}`, { headers: { accept: 'application/json' } }),
    ],
    [
      'the resolver’s report form',
      () =>
        fetch(`${t.url}/resolver/report`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
          body: new URLSearchParams({ link: 'not a link', reason: 'x' }),
        }),
    ],
    ['the public auction verification', () => fetch(`${t.url}/api/v1/auction/public/verify/NOPE-123`)],
  ];

  publicRequests.forEach(([name, request], index) => {
    it(`refuses the 11th request in a second to ${name} with 429 and Retry-After`, async () => {
      await at(`2032-01-09T12:00:0${index}.100Z`, async () => {
        const statuses: number[] = [];
        for (let i = 0; i < 10; i++) {
          const response = await request();
          await response.arrayBuffer();
          statuses.push(response.status);
        }
        expect(statuses.filter((status) => status === 429)).toEqual([]);
        const refused = await request();
        expect(refused.status).toBe(429);
        expect(refused.headers.get('retry-after')).toBe('1');
        expect(((await refused.json()) as Json).error?.details).toMatchObject({ limit: 'requests-per-second-per-address' });
      });
    });
  });

  it('counts a ping with a valid key against its account, not the address', async () => {
    const { key } = await newTenant('starter');
    await at('2032-01-09T12:00:30.100Z', async () => {
      for (let i = 0; i < 15; i++) {
        const response = await api('POST', '/system/ping/code-service', { key, body: {} });
        expect(response.status, JSON.stringify(response.body)).toBe(200);
        expect(response.headers.get('x-ratelimit-limit')).toBe('200');
      }
    });
  });
});
