import { accountStream } from '@hallmark/provenance';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call, startTestProduct, type TestProduct } from '../support/embedded.ts';

// What the web console needs beyond sessions, over real HTTP in the embedded form: keys' lastUsedAt
// and rotation with a grace period, today's usage and each key's requests (keys:read only), and the
// codes listing with a code's detail.

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let t: TestProduct;
let operator: string;

const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(t.url, method, `/api/v1${path}`, options);

function expectError(response: ApiResponse, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error?.code).toBe(code);
}

async function newTenant(tier: 'free' | 'starter' | 'enterprise' = 'starter', gtins: string[] = []) {
  const created = await api('POST', '/accounts', { key: operator, body: { name: `Console API ${Math.random()}`, tier } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  for (const gtin of gtins) {
    const grant = await api('POST', `/accounts/${created.body.account.id}/gtins`, { key: operator, body: { gtin } });
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);
  }
  return {
    accountId: created.body.account.id as string,
    key: created.body.apiKey.secret as string,
    keyId: created.body.apiKey.id,
  };
}

async function newKey(creator: string, body: Json) {
  const made = await api('POST', '/keys', { key: creator, body });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  return made.body as { id: string; secret: string; name: string; scopes: string[]; expiresAt: string | null };
}

async function eventsOf(accountId: string) {
  const rows = await t.product.db.query<{ event_type: string; data: Json | string }>(
    'SELECT event_type, data FROM event_log WHERE stream_id = $1 ORDER BY stream_version',
    [accountStream({ accountId, environment: 'live' })],
  );
  return rows.map((row) => ({ type: row.event_type, data: typeof row.data === 'string' ? JSON.parse(row.data) : row.data }));
}

async function eventually<T>(ms: number, read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() - started > ms) throw new Error(`not within ${ms} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  t = await startTestProduct();
  operator = t.product.generatedOperatorKey as string;
});

afterAll(async () => {
  await t?.stop();
});

describe('keys: lastUsedAt', () => {
  it('appears a few seconds after a key is used, and stays null for a key never used', async () => {
    const tenant = await newTenant();
    const used = await newKey(tenant.key, { name: 'used', scopes: ['keys:read'] });
    const unused = await newKey(tenant.key, { name: 'unused', scopes: ['keys:read'] });
    const before = await api('GET', '/keys?type=api', { key: tenant.key });
    expect(before.body.keys.find((key: Json) => key.id === used.id).lastUsedAt).toBeNull();
    const usedAt = Date.now();
    expect((await api('GET', '/keys', { key: used.secret })).status).toBe(200);
    const listed = await eventually(
      5_000,
      () => api('GET', '/keys?type=api', { key: tenant.key }),
      (response) => response.body.keys.find((key: Json) => key.id === used.id).lastUsedAt !== null,
    );
    const lastUsedAt = Date.parse(listed.body.keys.find((key: Json) => key.id === used.id).lastUsedAt);
    expect(lastUsedAt).toBeGreaterThanOrEqual(usedAt - 1_000);
    expect(lastUsedAt).toBeLessThanOrEqual(Date.now() + 1_000);
    expect(listed.body.keys.find((key: Json) => key.id === unused.id).lastUsedAt).toBeNull();
    // Written in batches: the api_keys rows (and their cache epoch) are not touched by use.
    const epochs = await t.product.db.query<{ value: string }>("SELECT value FROM cache_epochs WHERE name = 'api_keys'");
    expect((await api('GET', '/keys', { key: used.secret })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const after = await t.product.db.query<{ value: string }>("SELECT value FROM cache_epochs WHERE name = 'api_keys'");
    expect(after[0]?.value).toBe(epochs[0]?.value);
  });
});

describe('keys: rotation', () => {
  it('issues a key like the old one and lets the old one work until the grace ends, then EXPIRED_API_KEY', async () => {
    const tenant = await newTenant();
    const old = await newKey(tenant.key, { name: 'server', scopes: ['keys:read', 'assets:read'], expiresIn: '90d' });
    expect((await api('GET', '/keys', { key: old.secret })).status).toBe(200);
    // A console session of the old key lives as long as the key does.
    const signedIn = await api('POST', '/sessions', { body: { apiKey: old.secret } });
    const token = /hallmark_session=([0-9a-f]{64})/.exec(signedIn.headers.get('set-cookie') ?? '')?.[1];
    const viaSession = () => api('GET', '/keys', { headers: { cookie: `hallmark_session=${token}` } });
    const now = t.clock.now().getTime();
    const rotated = await api('POST', `/keys/${old.id}/rotate`, { key: tenant.key, body: { graceSeconds: 900 } });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(201);
    expect(rotated.body).toMatchObject({
      type: 'api',
      name: 'server',
      environment: 'live',
      scopes: ['keys:read', 'assets:read'],
    });
    expect(rotated.body.secret).toMatch(/^svc_live_[0-9a-f]{64}$/);
    expect(rotated.body.id).not.toBe(old.id);
    expect(rotated.body.lastUsedAt).toBeNull();
    // The same lifetime (90 days) from now.
    expect(Date.parse(rotated.body.expiresAt) - now).toBeGreaterThan(90 * 86_400_000 - 60_000);
    expect(rotated.body.replaced.id).toBe(old.id);
    const graceEnd = Date.parse(rotated.body.replaced.expiresAt);
    expect(graceEnd - now).toBeGreaterThan(899_000);
    expect(graceEnd - now).toBeLessThan(960_000);
    // Both work during the grace; the old key lists with its new expiry.
    expect((await api('GET', '/keys', { key: old.secret })).status).toBe(200);
    expect((await api('GET', '/keys', { key: rotated.body.secret })).status).toBe(200);
    const listed = await api('GET', '/keys?type=api', { key: tenant.key });
    expect(listed.body.keys.find((key: Json) => key.id === old.id).expiresAt).toBe(rotated.body.replaced.expiresAt);
    expect((await viaSession()).status).toBe(200);
    // After the grace: the old key is expired (its session too), the new one works.
    t.clock.advance(901_000);
    try {
      expectError(await api('GET', '/keys', { key: old.secret }), 401, 'EXPIRED_API_KEY');
      expectError(await viaSession(), 401, 'EXPIRED_API_KEY');
      expectError(await viaSession(), 401, 'MISSING_API_KEY');
      expect((await api('GET', '/keys', { key: rotated.body.secret })).status).toBe(200);
    } finally {
      t.clock.advance(-901_000);
    }
    // Recorded in the account's stream: the new key (naming what it replaces) and the rotation.
    const events = await eventsOf(tenant.accountId);
    expect(events.slice(-2)).toEqual([
      { type: 'key.issued', data: expect.objectContaining({ keyId: rotated.body.id, replaces: old.id, name: 'server' }) },
      {
        type: 'key.rotated',
        data: expect.objectContaining({
          keyId: old.id,
          replacedBy: rotated.body.id,
          graceSeconds: 900,
          expiresAt: rotated.body.replaced.expiresAt,
          rotatedBy: tenant.keyId,
        }),
      },
    ]);
    expect(JSON.stringify(events)).not.toContain(rotated.body.secret);
  });

  it('with no grace, refuses the old key at once', async () => {
    const tenant = await newTenant();
    const old = await newKey(tenant.key, { name: 'at once', scopes: ['keys:read'] });
    // Cached by the authenticator before the rotation.
    expect((await api('GET', '/keys', { key: old.secret })).status).toBe(200);
    const rotated = await api('POST', `/keys/${old.id}/rotate`, { key: tenant.key, body: { graceSeconds: 0 } });
    expect(rotated.status).toBe(201);
    expect(rotated.body.expiresAt).toBeNull();
    expectError(await api('GET', '/keys', { key: old.secret }), 401, 'EXPIRED_API_KEY');
    expect((await api('GET', '/keys', { key: rotated.body.secret })).status).toBe(200);
    // An expired key cannot be rotated again.
    expectError(await api('POST', `/keys/${old.id}/rotate`, { key: tenant.key, body: { graceSeconds: 0 } }), 409, 'CONFLICT');
    // A key rotating itself with no grace would lose the new secret with a lost answer, and could not retry (401).
    const itself = await newKey(tenant.key, { name: 'itself', scopes: ['keys:read', 'keys:write'] });
    const refused = await api('POST', `/keys/${itself.id}/rotate`, { key: itself.secret, body: { graceSeconds: 0 } });
    expectError(refused, 400, 'VALIDATION_ERROR');
    expect((await api('GET', '/keys', { key: itself.secret })).status).toBe(200);
    const withGrace = await api('POST', `/keys/${itself.id}/rotate`, { key: itself.secret, body: { graceSeconds: 900 } });
    expect(withGrace.status, JSON.stringify(withGrace.body)).toBe(201);
  });

  it('refuses a revoked key, an unknown one, another account’s, a stronger one, and a grace not offered', async () => {
    const tenant = await newTenant();
    const other = await newTenant();
    const revoked = await newKey(tenant.key, { name: 'revoked', scopes: ['keys:read'] });
    await api('POST', `/keys/${revoked.id}/revoke`, { key: tenant.key });
    expectError(
      await api('POST', `/keys/${revoked.id}/rotate`, { key: tenant.key, body: { graceSeconds: 900 } }),
      409,
      'CONFLICT',
    );
    expectError(await api('POST', '/keys/key_nope/rotate', { key: tenant.key, body: { graceSeconds: 900 } }), 404, 'NOT_FOUND');
    expectError(
      await api('POST', `/keys/${other.keyId}/rotate`, { key: tenant.key, body: { graceSeconds: 900 } }),
      404,
      'NOT_FOUND',
    );
    const narrow = await newKey(tenant.key, { name: 'narrow', scopes: ['keys:write'] });
    expectError(
      await api('POST', `/keys/${tenant.keyId}/rotate`, { key: narrow.secret, body: { graceSeconds: 900 } }),
      403,
      'INSUFFICIENT_SCOPE',
    );
    expectError(
      await api('POST', `/keys/${narrow.id}/rotate`, { key: tenant.key, body: { graceSeconds: 60 } }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(await api('POST', `/keys/${narrow.id}/rotate`, { key: tenant.key, body: {} }), 400, 'VALIDATION_ERROR');
    const reader = await newKey(tenant.key, { name: 'reader', scopes: ['keys:read'] });
    expectError(
      await api('POST', `/keys/${narrow.id}/rotate`, { key: reader.secret, body: { graceSeconds: 900 } }),
      403,
      'INSUFFICIENT_SCOPE',
    );
  });
});

describe('usage', () => {
  it('counts each key’s requests today and this minute, and the account’s quotas', async () => {
    const gtin = '09506000134376';
    const tenant = await newTenant('starter', [gtin]);
    const a = await newKey(tenant.key, { name: 'a', scopes: ['keys:read', 'assets:create', 'assets:verify'] });
    const b = await newKey(tenant.key, { name: 'b', scopes: ['keys:read'] });
    const idle = await newKey(tenant.key, { name: 'idle', scopes: ['keys:read'] });
    // One clock minute throughout, so "this minute" is the same minute for every request.
    t.clock.freeze(t.clock.now());
    try {
      for (let i = 0; i < 3; i++) expect((await api('GET', '/keys', { key: a.secret })).status).toBe(200);
      for (let i = 0; i < 2; i++) expect((await api('GET', '/keys', { key: b.secret })).status).toBe(200);
      const code = await api('POST', '/code/generate', { key: a.secret, body: { gtin, serialNumber: 'USAGE-1' } });
      expect(code.status, JSON.stringify(code.body)).toBe(201);
      expect((await api('POST', '/code/verify', { key: a.secret, body: { url: code.body.url } })).status).toBe(200);

      const perKey = await api('GET', '/usage/keys', { key: tenant.key });
      expect(perKey.status, JSON.stringify(perKey.body)).toBe(200);
      const byName = Object.fromEntries(perKey.body.data.map((row: Json) => [row.name, row]));
      expect(byName.a).toMatchObject({ keyId: a.id, requestsToday: 5, requestsThisMinute: 5 });
      expect(byName.b).toMatchObject({ keyId: b.id, requestsToday: 2, requestsThisMinute: 2 });
      expect(byName.idle).toMatchObject({ keyId: idle.id, requestsToday: 0, requestsThisMinute: 0, lastUsedAt: null });
      // The asking key counts its own request.
      expect(byName['first key'].requestsToday).toBeGreaterThanOrEqual(1);
      expect(perKey.body.nextCursor).toBeNull();

      // Paged, newest first.
      const first = await api('GET', '/usage/keys?limit=2', { key: tenant.key });
      expect(first.body.data.map((row: Json) => row.name)).toEqual(['idle', 'b']);
      expect(first.body.nextCursor).toEqual(expect.any(String));
      const second = await api('GET', `/usage/keys?limit=2&cursor=${first.body.nextCursor}`, { key: tenant.key });
      expect(second.body.data.map((row: Json) => row.name)).toEqual(['a', 'first key']);
      expect(second.body.nextCursor).toBeNull();
      expectError(await api('GET', '/usage/keys?cursor=garbage', { key: tenant.key }), 400, 'VALIDATION_ERROR');

      // A minute later, this minute's counts start again; today's stay.
      t.clock.freeze(new Date(t.clock.now().getTime() + 60_000));
      const later = await api('GET', '/usage/keys', { key: tenant.key });
      const laterA = later.body.data.find((row: Json) => row.keyId === a.id);
      expect(laterA).toMatchObject({ requestsToday: 5, requestsThisMinute: 0 });

      const usage = await api('GET', '/usage', { key: b.secret });
      expect(usage.status, JSON.stringify(usage.body)).toBe(200);
      expect(usage.body).toMatchObject({
        accountId: tenant.accountId,
        environment: 'live',
        tier: 'starter',
        day: t.clock.now().toISOString().slice(0, 10),
        rateLimit: { limit: 200, windowSeconds: 1 },
      });
      expect(Date.parse(usage.body.resetsAt)).toBe(Date.parse(`${usage.body.day}T00:00:00.000Z`) + 86_400_000);
      const quotas = Object.fromEntries(usage.body.quotas.map((quota: Json) => [quota.name, quota]));
      expect(quotas.generate).toEqual({ name: 'generate', used: 1, limit: 1000 });
      expect(quotas.verify).toEqual({ name: 'verify', used: 1, limit: 10000 });
      expect(quotas.requests.limit).toBeNull();
      expect(quotas.requests.used).toBeGreaterThanOrEqual(12);
    } finally {
      t.clock.freeze(undefined);
    }
  });

  it('lists the keys’ requests only to a key holding keys:read, as GET /keys: 403 INSUFFICIENT_SCOPE in the error envelope', async () => {
    const tenant = await newTenant();
    const verifier = await newKey(tenant.key, { name: 'verifier', scopes: ['assets:verify'] });
    const reader = await newKey(tenant.key, { name: 'reader', scopes: ['keys:read'] });
    const refused = await api('GET', '/usage/keys', { key: verifier.secret });
    expectError(refused, 403, 'INSUFFICIENT_SCOPE');
    expect(refused.body).toEqual({
      error: {
        code: 'INSUFFICIENT_SCOPE',
        message: expect.stringContaining('keys:read'),
        details: { required: 'keys:read', granted: ['assets:verify'] },
      },
      meta: { requestId: refused.headers.get('x-request-id'), timestamp: expect.any(String) },
    });
    // Nothing of the other keys leaks into the refusal.
    expect(JSON.stringify(refused.body)).not.toContain(reader.id);
    // The same key still reads its account's usage; a keys:read key reads the list.
    expect((await api('GET', '/usage', { key: verifier.secret })).status).toBe(200);
    const listed = await api('GET', '/usage/keys', { key: reader.secret });
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body.data.map((row: Json) => row.keyId)).toContain(verifier.id);
    // The OpenAPI document says so.
    const openapi = await api('GET', '/openapi.json');
    expect(openapi.body.paths['/api/v1/usage/keys'].get['x-required-scope']).toBe('keys:read');
  });

  it('shows a test environment’s 100 requests a day, and refuses nothing to any scope', async () => {
    const tenant = await newTenant('free');
    const sandbox = await newKey(tenant.key, { name: 'sandbox', scopes: ['assets:read'], environment: 'test' });
    const usage = await api('GET', '/usage', { key: sandbox.secret });
    expect(usage.status, JSON.stringify(usage.body)).toBe(200);
    expect(usage.body.environment).toBe('test');
    const quotas = Object.fromEntries(usage.body.quotas.map((quota: Json) => [quota.name, quota]));
    expect(quotas.requests).toEqual({ name: 'requests', used: 1, limit: 100 });
    expect(quotas.generate).toEqual({ name: 'generate', used: 0, limit: 100 });
    expectError(await api('GET', '/usage'), 401, 'MISSING_API_KEY');
  });
});

describe('codes: listing and detail', () => {
  const gtin = '09506000134383';
  const otherGtin = '09506000134390';
  let brand: Awaited<ReturnType<typeof newTenant>>;
  let rival: Awaited<ReturnType<typeof newTenant>>;
  /** asset ids in the order they were made (oldest first). */
  const made: Json[] = [];

  beforeAll(async () => {
    brand = await newTenant('enterprise', [gtin]);
    rival = await newTenant('enterprise', [otherGtin]);
    const items = Array.from({ length: 7 }, (_, index) => ({
      gtin,
      serialNumber: `LIST-${index + 1}`,
      batchNumber: index < 4 ? 'LOT-A' : 'LOT-B',
      metadata: { name: `Item ${index + 1}` },
    }));
    // One at a time, so each has its own creation time.
    for (const item of items) {
      const code = await api('POST', '/code/generate', { key: brand.key, body: item });
      expect(code.status, JSON.stringify(code.body)).toBe(201);
      made.push(code.body);
    }
    const theirs = await api('POST', '/code/generate', { key: rival.key, body: { gtin: otherGtin, serialNumber: 'LIST-1' } });
    expect(theirs.status).toBe(201);
    made.push({ ...theirs.body, rival: true });
  });

  it('lists the caller’s codes newest first, in pages that neither skip nor repeat', async () => {
    const ours = made.filter((code) => !code.rival);
    const all = await api('GET', '/codes', { key: brand.key });
    expect(all.status, JSON.stringify(all.body)).toBe(200);
    expect(all.body.data.map((code: Json) => code.assetId)).toEqual(ours.map((code) => code.assetId).reverse());
    expect(all.body.data[0]).toEqual({
      assetId: ours[6]?.assetId,
      gtin,
      serialNumber: 'LIST-7',
      batchNumber: 'LOT-B',
      expiryDate: null,
      url: ours[6]?.url,
      createdAt: ours[6]?.createdAt,
      metadata: expect.objectContaining({ name: 'Item 7' }),
    });
    expect(all.body.nextCursor).toBeNull();

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: ApiResponse<Json> = await api('GET', `/codes?limit=3${cursor ? `&cursor=${cursor}` : ''}`, { key: brand.key });
      expect(page.status).toBe(200);
      expect(page.body.data.length).toBeLessThanOrEqual(3);
      expect(page.body.pagination.nextCursor).toBe(page.body.nextCursor);
      seen.push(...page.body.data.map((code: Json) => code.assetId));
      cursor = page.body.nextCursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(ours.map((code) => code.assetId).reverse());
  });

  it('filters by GTIN, serial and batch, and never shows another account’s or environment’s codes', async () => {
    const names = async (query: string, key = brand.key) => {
      const response = await api('GET', `/codes${query}`, { key });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      return response.body.data.map((code: Json) => code.serialNumber);
    };
    expect(await names('?batch=LOT-A')).toEqual(['LIST-4', 'LIST-3', 'LIST-2', 'LIST-1']);
    expect(await names('?batch=LOT-B&limit=2')).toEqual(['LIST-7', 'LIST-6']);
    expect(await names('?serial=LIST-5')).toEqual(['LIST-5']);
    expect(await names(`?gtin=${gtin}&serial=LIST-2`)).toEqual(['LIST-2']);
    expect(await names(`?gtin=${gtin}&batch=LOT-B`)).toEqual(['LIST-7', 'LIST-6', 'LIST-5']);
    expect(await names(`?gtin=${otherGtin}`)).toEqual([]);
    expect(await names('?batch=NOPE')).toEqual([]);
    // The rival's LIST-1 is theirs alone.
    expect(await names('?serial=LIST-1', rival.key)).toEqual(['LIST-1']);
    expect((await api('GET', '/codes?serial=LIST-1', { key: rival.key })).body.data[0].gtin).toBe(otherGtin);
    // The brand's test environment has none of its live codes.
    const sandbox = await newKey(brand.key, { name: 'sandbox', scopes: ['assets:read'], environment: 'test' });
    expect(await names('', sandbox.secret)).toEqual([]);
    // Bad input answers the envelope.
    expectError(await api('GET', '/codes?gtin=123', { key: brand.key }), 400, 'VALIDATION_ERROR');
    expectError(await api('GET', '/codes?limit=0', { key: brand.key }), 400, 'VALIDATION_ERROR');
    expectError(await api('GET', '/codes?cursor=bm9wZQ', { key: brand.key }), 400, 'VALIDATION_ERROR');
    const reader = await newKey(brand.key, { name: 'no assets', scopes: ['keys:read'] });
    expectError(await api('GET', '/codes', { key: reader.secret }), 403, 'INSUFFICIENT_SCOPE');
  });

  it('stops a page of large codes early (one bus message), and pages on without losing any', async () => {
    const bigGtin = '09506000134413';
    const big = await newTenant('enterprise', [bigGtin]);
    const filler = 'x'.repeat(15 * 1024);
    const items = Array.from({ length: 40 }, (_, index) => ({
      gtin: bigGtin,
      serialNumber: `BIG-${index}`,
      metadata: { filler },
    }));
    const batch = await api('POST', '/code/generate/batch', { key: big.key, body: { items } });
    expect(batch.status, JSON.stringify(batch.body).slice(0, 500)).toBeLessThan(300);
    const seen = new Set<string>();
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: ApiResponse<Json> = await api('GET', `/codes?limit=200${cursor ? `&cursor=${cursor}` : ''}`, { key: big.key });
      expect(page.status).toBe(200);
      expect(page.body.data.length).toBeGreaterThan(0);
      expect(page.body.data.length).toBeLessThan(40);
      for (const code of page.body.data as Json[]) seen.add(code.assetId);
      cursor = page.body.nextCursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBeGreaterThan(1);
    expect(seen.size).toBe(40);
  });

  it('answers a code with its scans, report and block; another account’s code is NOT_FOUND', async () => {
    const code = made[2] as Json;
    const fresh = await api('GET', `/codes/${code.assetId}`, { key: brand.key });
    expect(fresh.status, JSON.stringify(fresh.body)).toBe(200);
    expect(fresh.body).toMatchObject({
      assetId: code.assetId,
      serialNumber: 'LIST-3',
      scans: { count: 0, firstAt: null, lastAt: null, flags: [] },
      reported: false,
      blocked: null,
    });

    // Scanned in Paris, then in New York a moment later: an impossible journey.
    const paris = await api('POST', '/code/verify', {
      key: brand.key,
      body: { url: code.url, location: { latitude: 48.85, longitude: 2.35 } },
    });
    expect(paris.body.verdict).toBe('AUTHENTIC');
    const newYork = await api('POST', '/code/verify', {
      key: brand.key,
      body: { url: code.url, location: { latitude: 40.71, longitude: -74.0 } },
    });
    expect(newYork.body.riskIndicators).toContain('GEOGRAPHIC_IMPOSSIBILITY');
    const scanned = await eventually(
      15_000,
      () => api('GET', `/codes/${code.assetId}`, { key: brand.key }),
      (response) => response.body.scans?.count === 2,
    );
    expect(scanned.body.scans.flags).toEqual(['GEOGRAPHIC_IMPOSSIBILITY']);
    expect(Date.parse(scanned.body.scans.lastAt)).toBeGreaterThanOrEqual(Date.parse(scanned.body.scans.firstAt));

    // The scans list carries the journey the rule judged.
    const listed = await api('GET', '/scans?serial=LIST-3', { key: brand.key });
    const [latest, first] = listed.body.scans as Json[];
    expect(latest?.riskIndicators).toEqual(['GEOGRAPHIC_IMPOSSIBILITY']);
    expect(latest?.scanNumber).toBe(2);
    expect(latest?.travelKm).toBeGreaterThan(5_800);
    expect(latest?.travelKm).toBeLessThan(5_900);
    expect(latest?.travelKmh === null || latest?.travelKmh > 900).toBe(true);
    expect(first?.travelKm).toBeNull();
    expect(first?.travelKmh).toBeNull();

    // Reported by someone, then blocked and unblocked by the owner.
    expect(
      (await api('POST', '/code/report', { key: rival.key, body: { url: code.url, reason: 'seen on a market' } })).status,
    ).toBe(201);
    const block = await api('POST', '/blocklist', {
      key: brand.key,
      body: { gtin, serial: 'LIST-3', kind: 'withdrawn', reason: 'recall' },
    });
    expect(block.status, JSON.stringify(block.body)).toBe(201);
    const blocked = await api('GET', `/codes/${code.assetId}`, { key: brand.key });
    expect(blocked.body.reported).toBe(true);
    expect(blocked.body.reportStatus).toBe('pending');
    // The entry's serials come with it: removing it unblocks every code it covers.
    expect(blocked.body.blocked).toEqual({
      blockId: block.body.blockId,
      status: 'active',
      kind: 'withdrawn',
      reason: 'recall',
      serialFrom: 'LIST-3',
      serialTo: 'LIST-3',
    });
    // A range covering it blocks it too; its neighbour of another length is not covered.
    const range = await api('POST', '/blocklist', {
      key: brand.key,
      body: { gtin, serialFrom: 'LIST-1', serialTo: 'LIST-2', kind: 'counterfeit' },
    });
    expect(range.status).toBe(201);
    expect((await api('GET', `/codes/${(made[1] as Json).assetId}`, { key: brand.key })).body.blocked?.blockId).toBe(
      range.body.blockId,
    );
    expect((await api('GET', `/codes/${(made[3] as Json).assetId}`, { key: brand.key })).body.blocked).toBeNull();
    expect((await api('DELETE', `/blocklist/${block.body.blockId}`, { key: brand.key })).status).toBe(200);
    expect((await api('GET', `/codes/${code.assetId}`, { key: brand.key })).body.blocked).toBeNull();
    // A dismissed report is said so: the console shows it as no warning.
    const pending = await api('GET', '/code/reports?status=pending&limit=100', { key: brand.key });
    const itsReport = (pending.body.reports as Json[]).find((entry) => entry.assetId === code.assetId) as Json;
    expect((await api('POST', `/code/reports/${itsReport.reportId}/dismiss`, { key: brand.key, body: {} })).status).toBe(200);
    expect((await api('GET', `/codes/${code.assetId}`, { key: brand.key })).body).toMatchObject({
      reported: true,
      reportStatus: 'dismissed',
    });

    // A confirmed report blocks a code too.
    const fourth = made[3] as Json;
    const report = await api('POST', '/code/report', { key: rival.key, body: { url: fourth.url, reason: 'fake seal' } });
    expect(report.status).toBe(201);
    const confirmed = await api('POST', `/code/reports/${report.body.reportId}/confirm`, {
      key: brand.key,
      body: { reason: 'confirmed fake' },
    });
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    const byReport = await api('GET', `/codes/${fourth.assetId}`, { key: brand.key });
    expect(byReport.body.reported).toBe(true);
    expect(byReport.body.reportStatus).toBe('confirmed');
    expect(byReport.body.blocked).toEqual({
      blockId: report.body.reportId,
      status: 'active',
      kind: 'report',
      reason: 'confirmed fake',
    });

    // Another account's code, an unknown one, another environment: NOT_FOUND.
    const theirs = made.find((entry) => entry.rival) as Json;
    expectError(await api('GET', `/codes/${theirs.assetId}`, { key: brand.key }), 404, 'NOT_FOUND');
    expectError(await api('GET', `/codes/${code.assetId}`, { key: rival.key }), 404, 'NOT_FOUND');
    expectError(await api('GET', '/codes/code_nope', { key: brand.key }), 404, 'NOT_FOUND');
    const sandbox = await newKey(brand.key, { name: 'sandbox 2', scopes: ['assets:read'], environment: 'test' });
    expectError(await api('GET', `/codes/${code.assetId}`, { key: sandbox.secret }), 404, 'NOT_FOUND');
  });
});
