import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';

/** The rough edges every client meets (issue #22, item 8), over real HTTP against the embedded product. */
let t: TestProduct;
let operator: string;

beforeAll(async () => {
  t = await startTestProduct({ HALLMARK_CONSOLE_URL: 'https://console.brand.test' });
  operator = t.product.generatedOperatorKey as string;
});

afterAll(async () => {
  await t?.stop();
});

describe('GET /', () => {
  it('points to the OpenAPI document, the docs and the console; the document names its server, licence and contact', async () => {
    const landing = await call<{ name: string; openapi: string; docs: string; console: string; jwks: string }>(t.url, 'GET', '/');
    expect(landing.status).toBe(200);
    expect(landing.body).toMatchObject({
      name: 'Hallmark API',
      openapi: `${t.url}/api/v1/openapi.json`,
      console: 'https://console.brand.test',
      jwks: `${t.url}/.well-known/jwks.json`,
    });
    expect(landing.body.docs).toContain('docs/API.md');
    const document = await call<{
      servers: Array<{ url: string }>;
      info: { license: { name: string }; contact: { url: string } };
    }>(t.url, 'GET', new URL(landing.body.openapi).pathname);
    expect(document.status).toBe(200);
    expect(document.body.servers[0]?.url).toBe(t.url);
    expect(document.body.info.contact.url).toBe(`${t.url}/`);
    expect(document.body.info.license.name).toBeTruthy();
  });

  it('leaves the resolver’s paths below / to the resolver', async () => {
    // A compressed Digital Link's path is one segment below /: still the resolver's, not a 405 or the landing.
    const compressed = await fetch(`${t.url}/not-a-compressed-link`, { redirect: 'manual' });
    expect([400, 404]).toContain(compressed.status);
    const uncompressed = await fetch(`${t.url}/01/09506000134352`, { redirect: 'manual' });
    expect(uncompressed.status).not.toBe(405);
    expect(await uncompressed.text()).not.toContain('Hallmark API"');
  });
});

describe('GET /api/v1/accounts/me and GET /api/v1/accounts', () => {
  it('tells a key its account, environment, scopes and own id', async () => {
    const created = await call<{ account: { id: string }; apiKey: { id: string; secret: string } }>(
      t.url,
      'POST',
      '/api/v1/accounts',
      { key: operator, body: { name: 'Acme Watches', tier: 'starter', environment: 'test' } },
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const me = await call(t.url, 'GET', '/api/v1/accounts/me', { key: created.body.apiKey.secret });
    expect(me.status, JSON.stringify(me.body)).toBe(200);
    expect(me.body).toEqual({
      account: {
        id: created.body.account.id,
        name: 'Acme Watches',
        tier: 'starter',
        isOperator: false,
        createdAt: expect.any(String),
      },
      key: { id: created.body.apiKey.id, environment: 'test', scopes: ['*'], expiresAt: null, restrictions: null },
    });
    const operatorMe = await call<{ account: { isOperator: boolean } }>(t.url, 'GET', '/api/v1/accounts/me', { key: operator });
    expect(operatorMe.body.account.isOperator).toBe(true);

    // The operator's listing shows it, newest first; a tenant's key may not list accounts.
    const listed = await call<{ accounts: Array<{ id: string }>; pagination: { hasMore: boolean } }>(
      t.url,
      'GET',
      '/api/v1/accounts?limit=1',
      { key: operator },
    );
    expect(listed.status).toBe(200);
    expect(listed.body.accounts.map((account) => account.id)).toEqual([created.body.account.id]);
    expect(listed.body.pagination.hasMore).toBe(true);
    const refused = await call(t.url, 'GET', '/api/v1/accounts', { key: created.body.apiKey.secret });
    expect([refused.status, refused.body.error?.code]).toEqual([403, 'INSUFFICIENT_SCOPE']);
  });

  it('answers 401 without a key', async () => {
    const me = await call(t.url, 'GET', '/api/v1/accounts/me');
    expect(me.status).toBe(401);
    expect(me.body.error?.code).toBe('MISSING_API_KEY');
  });
});

describe('a wrong method on a known path', () => {
  it('is 405 with Allow, in the error envelope; an unknown path stays 404', async () => {
    const wrong = await call(t.url, 'DELETE', '/api/v1/keys', { key: operator });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET, HEAD, POST');
    expect(wrong.body.error?.code).toBe('METHOD_NOT_ALLOWED');
    expect(wrong.body.error?.details).toEqual({ allowed: ['GET', 'HEAD', 'POST'] });
    const me = await call(t.url, 'POST', '/api/v1/accounts/me', { key: operator, body: {} });
    expect([me.status, me.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    const unknown = await call(t.url, 'GET', '/api/v1/no-such-thing', { key: operator });
    expect([unknown.status, unknown.body.error?.code]).toEqual([404, 'NOT_FOUND']);
  });
});

describe('validation errors', () => {
  it('give one message per field, the field’s path, and an enum’s allowed values once', async () => {
    const refused = await call(t.url, 'POST', '/api/v1/accounts', {
      key: operator,
      body: { name: 'x'.repeat(101), tier: 'gold', colour: 'red' },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error?.code).toBe('VALIDATION_ERROR');
    expect(refused.body.error?.details?.fields).toEqual([
      { field: 'colour', in: 'body', message: 'is not an accepted field' },
      { field: 'name', in: 'body', message: 'must be at most 100 characters long' },
      { field: 'tier', in: 'body', message: 'must be one of: free, starter, enterprise' },
    ]);
    expect(refused.body.error?.message).toBe(
      'Invalid request: 3 fields: colour is not an accepted field; name must be at most 100 characters long; tier must be one of: free, starter, enterprise.',
    );
    const query = await call(t.url, 'GET', '/api/v1/keys?limit=0', { key: operator });
    expect(query.status).toBe(400);
    expect(query.body.error?.details?.fields).toEqual([{ field: 'limit', in: 'querystring', message: 'must be at least 1' }]);
  });

  it('count a length as every service does (UTF-16 code units): an emoji beyond U+FFFF is two, refused at the gateway in its envelope', async () => {
    // 15 emoji: 15 code points, 30 code units, over the filters' 20. Counted in code points at the
    // gateway and in code units behind it, they passed the first and were refused by the second as
    // "Invalid listCodes request." naming the field /query/batch.
    const emoji = encodeURIComponent('😀'.repeat(15));
    for (const [path, field] of [
      [`/api/v1/codes?batch=${emoji}`, 'batch'],
      [`/api/v1/links?serial=${emoji}`, 'serial'],
      [`/api/v1/scans?batch=${emoji}`, 'batch'],
    ] as const) {
      const refused = await call(t.url, 'GET', path, { key: operator });
      expect({ path, status: refused.status, error: refused.body.error }).toEqual({
        path,
        status: 400,
        error: {
          code: 'VALIDATION_ERROR',
          message: `Invalid request: ${field} must be at most 20 characters long.`,
          details: { fields: [{ field, in: 'querystring', message: 'must be at most 20 characters long' }] },
        },
      });
    }
    // Ten (20 code units) is within the limit: an empty page, not a refusal.
    const within = await call(t.url, 'GET', `/api/v1/codes?batch=${encodeURIComponent('😀'.repeat(10))}`, { key: operator });
    expect(within.status).toBe(200);
  });
});
