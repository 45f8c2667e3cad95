import { createPostgresDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { call } from '../support/embedded.ts';

// The console's API in the distributed form, two gateway replicas on one PostgreSQL, Redis and
// NATS: a session made on one replica works on the other, a sign-out or a revocation on either
// (or by plain SQL) ends it on both, per-key counts are shared through Redis, lastUsedAt is
// written by both, and the codes listing goes over NATS to code-service and verify-service.

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let product: RunningProduct;
let one: string;
let two: string;

const api = (url: string, method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(url, method, `/api/v1${path}`, options);
const withCookie = (url: string, token: string, method: string, path: string, body?: unknown) =>
  api(url, method, path, {
    ...(body !== undefined ? { body } : {}),
    headers: { cookie: `hallmark_session=${token}`, 'x-hallmark-console': '1' },
  });

async function signIn(url: string, apiKey: string): Promise<string> {
  const response = await api(url, 'POST', '/sessions', { body: { apiKey } });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  const token = /^hallmark_session=([0-9a-f]{64});/.exec(response.headers.get('set-cookie') ?? '')?.[1];
  if (!token) throw new Error('no session cookie');
  return token;
}

async function newTenant(gtins: string[] = []) {
  const created = await api(one, 'POST', '/accounts', {
    key: product.operatorKey,
    body: { name: `Distributed console ${Math.random()}`, tier: 'enterprise' },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  for (const gtin of gtins) {
    const grant = await api(one, 'POST', `/accounts/${created.body.account.id}/gtins`, {
      key: product.operatorKey,
      body: { gtin },
    });
    expect(grant.status).toBe(201);
  }
  return {
    accountId: created.body.account.id as string,
    key: created.body.apiKey.secret as string,
    keyId: created.body.apiKey.id,
  };
}

async function newKey(url: string, creator: string, body: Json) {
  const made = await api(url, 'POST', '/keys', { key: creator, body });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  return made.body as { id: string; secret: string };
}

/** Milliseconds until `check` holds (fails past `ms`). */
async function within(ms: number, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function sql(text: string, params: unknown[]) {
  const db = createPostgresDatabase({ connectionString: product.databaseUrl as string, applicationName: 'test-console' });
  try {
    return await db.query<Json>(text, params);
  } finally {
    await db.close();
  }
}

beforeAll(async () => {
  product = await startDistributedProduct({}, { gateways: 2 });
  [one, two] = product.gatewayUrls as [string, string];
}, 120_000);

afterAll(async () => {
  await product?.stop();
});

describe('console sessions across two gateway replicas', () => {
  it('a session made on one replica works on the other, its environment switch too', async () => {
    const tenant = await newTenant();
    const token = await signIn(one, tenant.key);
    const onTwo = await withCookie(two, token, 'GET', '/keys');
    expect(onTwo.status, JSON.stringify(onTwo.body)).toBe(200);
    expect(onTwo.body.accountId).toBe(tenant.accountId);
    const switched = await withCookie(two, token, 'PATCH', '/sessions/current', { environment: 'test' });
    expect(switched.status).toBe(200);
    expect((await withCookie(one, token, 'GET', '/keys')).body.environment).toBe('test');
    expect((await withCookie(one, token, 'GET', '/sessions/current')).body.session.environment).toBe('test');
  });

  it('a sign-out on one replica is refused by the other at once', async () => {
    const tenant = await newTenant();
    const token = await signIn(one, tenant.key);
    expect((await withCookie(two, token, 'GET', '/keys')).status).toBe(200);
    expect((await withCookie(one, token, 'DELETE', '/sessions/current')).status).toBe(204);
    const after = await withCookie(two, token, 'GET', '/keys');
    expect(after.status).toBe(401);
    expect(after.body.error?.code).toBe('MISSING_API_KEY');
  });

  it('a key revoked through one replica, or by plain SQL, ends its sessions on both within a second', async () => {
    const tenant = await newTenant();
    const viaApi = await newKey(one, tenant.key, { name: 'revoked by API', scopes: ['keys:read'] });
    const viaSql = await newKey(one, tenant.key, { name: 'revoked by SQL', scopes: ['keys:read'] });
    const apiToken = await signIn(one, viaApi.secret);
    const sqlToken = await signIn(two, viaSql.secret);
    for (const url of [one, two]) {
      expect((await withCookie(url, apiToken, 'GET', '/keys')).status).toBe(200);
      expect((await withCookie(url, sqlToken, 'GET', '/keys')).status).toBe(200);
    }
    expect((await api(one, 'POST', `/keys/${viaApi.id}/revoke`, { key: tenant.key })).status).toBe(200);
    await sql('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [viaSql.id]);
    for (const url of [two, one]) {
      for (const token of [apiToken, sqlToken]) {
        const ms = await within(1_500, async () => (await withCookie(url, token, 'GET', '/keys')).status === 401);
        expect(ms).toBeLessThan(1_500);
      }
    }
  });
});

describe('usage and lastUsedAt across two gateway replicas (Redis counters)', () => {
  it('counts a key’s requests on both replicas together, and both write its lastUsedAt', async () => {
    const tenant = await newTenant();
    const worker = await newKey(one, tenant.key, { name: 'worker', scopes: ['keys:read'] });
    const minuteAtStart = Math.floor(Date.now() / 60_000);
    for (let i = 0; i < 3; i++) expect((await api(one, 'GET', '/keys', { key: worker.secret })).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await api(two, 'GET', '/keys', { key: worker.secret })).status).toBe(200);
    for (const url of [one, two]) {
      // "This minute" is the minute of the reading, somewhere between these two.
      const minuteBefore = Math.floor(Date.now() / 60_000);
      const usage = await api(url, 'GET', '/usage/keys', { key: tenant.key });
      const minuteAfter = Math.floor(Date.now() / 60_000);
      expect(usage.status, JSON.stringify(usage.body)).toBe(200);
      const row = usage.body.data.find((entry: Json) => entry.keyId === worker.id);
      expect(row.requestsToday).toBe(5);
      if (minuteAfter === minuteAtStart) expect(row.requestsThisMinute).toBe(5);
      else if (minuteBefore !== minuteAtStart) expect(row.requestsThisMinute).toBeLessThan(5);
      else expect(row.requestsThisMinute).toBeLessThanOrEqual(5);
    }
    const quotas = (await api(two, 'GET', '/usage', { key: tenant.key })).body.quotas as Json[];
    expect(quotas.find((quota) => quota.name === 'requests')?.used).toBeGreaterThanOrEqual(8);
    await within(6_000, async () => {
      const listed = await api(two, 'GET', '/keys?type=api', { key: tenant.key });
      return listed.body.keys.find((key: Json) => key.id === worker.id)?.lastUsedAt !== null;
    });
  });
});

describe('codes listing over the bus', () => {
  it('pages the caller’s codes and answers a code’s detail; another account’s is NOT_FOUND', async () => {
    const gtin = '09506000134406';
    const tenant = await newTenant([gtin]);
    const rival = await newTenant();
    const made: string[] = [];
    for (let i = 1; i <= 5; i++) {
      const code = await api(one, 'POST', '/code/generate', {
        key: tenant.key,
        body: { gtin, serialNumber: `DIST-${i}`, batchNumber: 'B1' },
      });
      expect(code.status).toBe(201);
      made.push(code.body.assetId);
    }
    const first = await api(two, 'GET', '/codes?limit=3', { key: tenant.key });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const second = await api(one, 'GET', `/codes?limit=3&cursor=${first.body.nextCursor}`, { key: tenant.key });
    expect([...first.body.data, ...second.body.data].map((code: Json) => code.assetId)).toEqual([...made].reverse());
    expect(second.body.nextCursor).toBeNull();
    expect((await api(two, 'GET', `/codes?serial=DIST-2&gtin=${gtin}`, { key: tenant.key })).body.data).toHaveLength(1);
    const detail = await api(two, 'GET', `/codes/${made[0]}`, { key: tenant.key });
    expect(detail.status, JSON.stringify(detail.body)).toBe(200);
    expect(detail.body).toMatchObject({
      serialNumber: 'DIST-1',
      batchNumber: 'B1',
      scans: { count: 0 },
      reported: false,
      blocked: null,
    });
    const refused = await api(one, 'GET', `/codes/${made[0]}`, { key: rival.key });
    expect(refused.status).toBe(404);
    expect(refused.body.error?.code).toBe('NOT_FOUND');
  });
});
