import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call, startTestProduct, type TestProduct } from '../support/embedded.ts';

// The web console's sessions over real HTTP (docs/SECURITY.md, "Console sessions"): sign-in with an
// API key, the cookie in place of x-api-key, the CSRF rule, the environment switch, sign-out, a
// revoked key ending its sessions, and idle and absolute expiry on the product's movable clock.

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let t: TestProduct;
let operator: string;

const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(t.url, method, `/api/v1${path}`, options);

/** A request with the session cookie (and the console's header unless told otherwise). */
const withCookie = (
  cookie: string,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string>; consoleHeader?: boolean } = {},
) =>
  api(method, path, {
    ...(options.body !== undefined ? { body: options.body } : {}),
    headers: {
      cookie: `hallmark_session=${cookie}`,
      ...(options.consoleHeader === false ? {} : { 'x-hallmark-console': '1' }),
      // A client address of its own (the proxy hop is trusted): a cookie that is no session counts
      // as a failed authentication of its address, and tests expecting a 401 must not share one.
      'x-forwarded-for': `203.0.113.${1 + Math.floor(Math.random() * 254)}, 198.18.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 254)}`,
      ...options.headers,
    },
  });

function expectError(response: ApiResponse, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error?.code).toBe(code);
}

async function newTenant(environment: 'live' | 'test' = 'live') {
  const created = await api('POST', '/accounts', {
    key: operator,
    body: { name: `Console tenant ${Math.random()}`, tier: 'enterprise', environment },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return {
    accountId: created.body.account.id as string,
    key: created.body.apiKey.secret as string,
    keyId: created.body.apiKey.id,
  };
}

/** Signs in; the session's token from the Set-Cookie header, with the answer. */
async function signIn(apiKey: string, headers: Record<string, string> = {}) {
  const response = await api('POST', '/sessions', { body: { apiKey }, headers });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  const setCookie = response.headers.get('set-cookie') ?? '';
  const token = /^(?:__Host-)?hallmark_session=([0-9a-f]{64});/.exec(setCookie)?.[1];
  if (!token) throw new Error(`no session cookie in ${setCookie}`);
  return { token, setCookie, body: response.body };
}

async function within(ms: number, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

beforeAll(async () => {
  // Behind a trusted proxy (loopback) so a forwarded HTTPS request can be told apart; few failed
  // authentications a minute so the brute-force limit is reached quickly.
  t = await startTestProduct({
    HALLMARK_TRUST_PROXY: 'loopback',
    HALLMARK_AUTH_FAILURES_PER_MINUTE: '5',
    // Sign-in is a public route, limited per address and second; this suite signs in often.
    HALLMARK_PUBLIC_RATE_LIMIT: '1000',
  });
  operator = t.product.generatedOperatorKey as string;
});

afterAll(async () => {
  await t?.stop();
});

describe('console sessions', () => {
  it('signs in with an API key: the session, its key and account, and an HttpOnly SameSite=Strict cookie', async () => {
    const tenant = await newTenant();
    const { token, setCookie, body } = await signIn(tenant.key);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Strict');
    expect(setCookie).toContain('Path=/');
    // Plain HTTP: not Secure (a browser would drop a Secure cookie from http://localhost).
    expect(setCookie).not.toContain('Secure');
    expect(body.session.environment).toBe('live');
    expect(new Date(body.session.expiresAt).getTime() - new Date(body.session.createdAt).getTime()).toBe(12 * 3_600_000);
    expect(new Date(body.session.idleExpiresAt).getTime() - new Date(body.session.createdAt).getTime()).toBe(30 * 60_000);
    expect(body.key).toEqual({
      id: tenant.keyId,
      name: 'first key',
      environment: 'live',
      scopes: ['*'],
      isOperator: false,
      restrictions: null,
    });
    expect(body.account).toMatchObject({ id: tenant.accountId, tier: 'enterprise' });
    expect(body.environments).toEqual(['live', 'test']);
    // The key is nowhere in the answer.
    expect(JSON.stringify(body)).not.toContain(tenant.key);

    const current = await withCookie(token, 'GET', '/sessions/current');
    expect(current.status).toBe(200);
    expect(current.body.session.id).toBe(body.session.id);
    expect(current.headers.get('set-cookie')).toBeNull();
    expect(current.headers.get('cache-control')).toContain('no-store');
  });

  it('refuses a sign-in from another site’s page, and ends the old session when signing in again', async () => {
    const tenant = await newTenant();
    expectError(
      await api('POST', '/sessions', { body: { apiKey: tenant.key }, headers: { origin: 'https://evil.example' } }),
      403,
      'CSRF_REJECTED',
    );
    const first = await signIn(tenant.key, { origin: t.url });
    const second = await signIn(tenant.key, { cookie: `hallmark_session=${first.token}` });
    expect(second.token).not.toBe(first.token);
    expectError(await withCookie(first.token, 'GET', '/sessions/current'), 401, 'MISSING_API_KEY');
    expect((await withCookie(second.token, 'GET', '/sessions/current')).status).toBe(200);
  });

  it('sets a Secure __Host- cookie over HTTPS through a trusted proxy, and reads no other there', async () => {
    const tenant = await newTenant();
    const overHttps = { 'x-forwarded-proto': 'https' };
    const { setCookie } = await signIn(tenant.key, overHttps);
    expect(setCookie).toMatch(/^__Host-hallmark_session=[^;]+; /);
    expect(setCookie).toMatch(/; Secure(;|$)/);
    expect(setCookie).toContain('Path=/');
    expect(setCookie).not.toMatch(/Domain=/i);
    const token = /^__Host-hallmark_session=([^;]+)/.exec(setCookie)?.[1] as string;
    const own = await api('GET', '/sessions/current', { headers: { ...overHttps, cookie: `__Host-hallmark_session=${token}` } });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    // Cookie tossing: a page on a sibling subdomain sets the plain cookie for the parent domain,
    // with a session of its own (a valid one), to sign the user in as someone else. Over HTTPS the
    // gateway reads only the __Host- cookie, which no other host can set.
    const attacker = await newTenant();
    const planted = await signIn(attacker.key);
    const tossed = await api('GET', '/sessions/current', {
      headers: { ...overHttps, cookie: `hallmark_session=${planted.token}` },
    });
    expectError(tossed, 401, 'MISSING_API_KEY');
    const tossedApi = await api('GET', '/keys?limit=1', {
      headers: { ...overHttps, cookie: `hallmark_session=${planted.token}` },
    });
    expectError(tossedApi, 401, 'MISSING_API_KEY');
    // Next to the user's own, the planted one changes nothing either.
    const both = await api('GET', '/sessions/current', {
      headers: { ...overHttps, cookie: `hallmark_session=${planted.token}; __Host-hallmark_session=${token}` },
    });
    expect(both.body.account.id).toBe(tenant.accountId);
  });

  it('refuses a wrong, revoked or expired key with the x-api-key codes', async () => {
    expectError(await api('POST', '/sessions', { body: { apiKey: 'nonsense' } }), 401, 'INVALID_API_KEY');
    expectError(await api('POST', '/sessions', { body: { apiKey: `svc_live_${'a'.repeat(64)}` } }), 401, 'INVALID_API_KEY');
    const tenant = await newTenant();
    const made = await api('POST', '/keys', {
      key: tenant.key,
      body: { name: 'short-lived', scopes: ['assets:read'], expiresIn: '1h' },
    });
    const revoked = await api('POST', '/keys', { key: tenant.key, body: { name: 'revoked', scopes: ['assets:read'] } });
    await api('POST', `/keys/${revoked.body.id}/revoke`, { key: tenant.key });
    expectError(await api('POST', '/sessions', { body: { apiKey: revoked.body.secret } }), 401, 'REVOKED_API_KEY');
    t.clock.advance(2 * 3_600_000);
    try {
      expectError(await api('POST', '/sessions', { body: { apiKey: made.body.secret } }), 401, 'EXPIRED_API_KEY');
    } finally {
      t.clock.advance(-2 * 3_600_000);
    }
    expectError(await api('POST', '/sessions', { body: {} }), 400, 'VALIDATION_ERROR');
  });

  it('answers every api-key route with the cookie in place of x-api-key, with the key’s scopes', async () => {
    const tenant = await newTenant();
    const reader = await api('POST', '/keys', { key: tenant.key, body: { name: 'reader', scopes: ['keys:read'] } });
    const { token } = await signIn(reader.body.secret);
    const keys = await withCookie(token, 'GET', '/keys');
    expect(keys.status, JSON.stringify(keys.body)).toBe(200);
    expect(keys.body.accountId).toBe(tenant.accountId);
    expect(keys.headers.get('cache-control')).toContain('no-store');
    // The key's scopes hold: keys:read cannot make keys.
    expectError(
      await withCookie(token, 'POST', '/keys', { body: { name: 'x', scopes: ['keys:read'] } }),
      403,
      'INSUFFICIENT_SCOPE',
    );
    // No cookie, no key: as before.
    expectError(await api('GET', '/keys'), 401, 'MISSING_API_KEY');
    expectError(await withCookie('f'.repeat(64), 'GET', '/keys'), 401, 'MISSING_API_KEY');
    expectError(await withCookie('not-a-token', 'GET', '/keys'), 401, 'MISSING_API_KEY');
  });

  it('refuses a cookie-authenticated change without X-Hallmark-Console or from another origin (CSRF_REJECTED)', async () => {
    const tenant = await newTenant();
    const { token } = await signIn(tenant.key);
    const body = { name: 'from the console', scopes: ['assets:read'] };
    const noHeader = await withCookie(token, 'POST', '/keys', { body, consoleHeader: false });
    expectError(noHeader, 403, 'CSRF_REJECTED');
    const foreign = await withCookie(token, 'POST', '/keys', { body, headers: { origin: 'https://evil.example' } });
    expectError(foreign, 403, 'CSRF_REJECTED');
    expectError(await withCookie(token, 'POST', '/keys', { body, headers: { origin: 'null' } }), 403, 'CSRF_REJECTED');
    expectError(
      await withCookie(token, 'PATCH', '/sessions/current', { body: { environment: 'test' }, consoleHeader: false }),
      403,
      'CSRF_REJECTED',
    );
    expectError(await withCookie(token, 'DELETE', '/sessions/current', { consoleHeader: false }), 403, 'CSRF_REJECTED');
    // Nothing was made by the refused requests.
    const listed = await api('GET', '/keys?type=api', { key: tenant.key });
    expect(listed.body.keys.map((key: Json) => key.name)).not.toContain('from the console');
    // From the console itself: its header, and its own origin or none.
    expect((await withCookie(token, 'POST', '/keys', { body, headers: { origin: t.url } })).status).toBe(201);
    expect((await withCookie(token, 'POST', '/keys', { body })).status).toBe(201);
    // Reads need no header; x-api-key requests are not affected.
    expect((await withCookie(token, 'GET', '/keys', { consoleHeader: false })).status).toBe(200);
    expect((await api('POST', '/keys', { key: tenant.key, body, headers: { origin: 'https://evil.example' } })).status).toBe(201);
  });

  it('switches a live key’s session to test and back, never a test key’s to live; the environments’ data never mix', async () => {
    const tenant = await newTenant();
    const { token } = await signIn(tenant.key);
    const switched = await withCookie(token, 'PATCH', '/sessions/current', { body: { environment: 'test' } });
    expect(switched.status, JSON.stringify(switched.body)).toBe(200);
    expect(switched.body.session.environment).toBe('test');
    expect(switched.body.key.environment).toBe('live');
    // In test, the session makes and sees test keys only.
    const testKey = await withCookie(token, 'POST', '/keys', { body: { name: 'made in test', scopes: ['assets:read'] } });
    expect(testKey.status).toBe(201);
    expect(testKey.body.environment).toBe('test');
    expect(testKey.body.secret).toMatch(/^svc_test_/);
    const inTest = await withCookie(token, 'GET', '/keys?type=api');
    expect(inTest.body.environment).toBe('test');
    expect(inTest.body.keys.map((key: Json) => key.name)).toEqual(['made in test']);
    // Back to live: the test key is not there, the live one is.
    const back = await withCookie(token, 'PATCH', '/sessions/current', { body: { environment: 'live' } });
    expect(back.body.session.environment).toBe('live');
    const inLive = await withCookie(token, 'GET', '/keys?type=api');
    expect(inLive.body.environment).toBe('live');
    expect(inLive.body.keys.map((key: Json) => key.name)).toEqual(['first key']);

    // A test key's session stays in test.
    const testSession = await signIn(testKey.body.secret);
    expect(testSession.body.session.environment).toBe('test');
    expect(testSession.body.environments).toEqual(['test']);
    expectError(
      await withCookie(testSession.token, 'PATCH', '/sessions/current', { body: { environment: 'live' } }),
      403,
      'INSUFFICIENT_SCOPE',
    );
    expectError(
      await withCookie(testSession.token, 'PATCH', '/sessions/current', { body: { environment: 'staging' } }),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('signs out: the session is deleted, the cookie cleared, and the next request is 401', async () => {
    const tenant = await newTenant();
    const { token } = await signIn(tenant.key);
    const out = await withCookie(token, 'DELETE', '/sessions/current');
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^hallmark_session=; .*Max-Age=0/);
    expectError(await withCookie(token, 'GET', '/sessions/current'), 401, 'MISSING_API_KEY');
    expectError(await withCookie(token, 'GET', '/keys'), 401, 'MISSING_API_KEY');
    // Signing out twice changes nothing.
    expect((await withCookie(token, 'DELETE', '/sessions/current')).status).toBe(204);
    const rows = await t.product.db.query<{ n: number }>('SELECT count(*)::int AS n FROM console_sessions WHERE key_id = $1', [
      tenant.keyId,
    ]);
    expect(rows[0]?.n).toBe(0);
  });

  it('refuses a request that carries the cookie twice (one tossed in by another page of the host), and removes both', async () => {
    // Found by an attack of 2026-12-07: over plain HTTP a page on another port of the same host sets
    // `hallmark_session=<its own session>; Path=/api/v1`; a browser sends that one first, and the
    // console, reading the first, acted in the other page's account (and a made-up one locked it out).
    const victim = await newTenant();
    const thief = await newTenant();
    const own = await signIn(victim.key);
    const planted = await signIn(thief.key);
    const both = `hallmark_session=${planted.token}; hallmark_session=${own.token}`;
    for (const [method, path] of [
      ['GET', '/keys'],
      ['GET', '/sessions/current'],
    ] as const) {
      const refused = await withCookie(own.token, method, path, { headers: { cookie: both } });
      expectError(refused, 401, 'MISSING_API_KEY');
      expect(JSON.stringify(refused.body)).not.toContain(thief.accountId);
      expect(refused.headers.get('cache-control')).toBe('no-store');
      // Removed at Path=/ and at every path a cookie sent with this request can have been set at.
      const cleared = refused.headers.getSetCookie();
      for (const at of ['/', '/api', '/api/v1', `/api/v1${path.split('/').slice(0, 2).join('/')}`])
        expect(cleared, at).toContainEqual(expect.stringMatching(new RegExp(`^hallmark_session=; .*Path=${at}; Max-Age=0`)));
    }
    // A change with both is refused the same way, and changes nothing.
    const made = await withCookie(own.token, 'POST', '/keys', {
      headers: { cookie: both },
      body: { name: 'tossed', scopes: ['keys:read'] },
    });
    expectError(made, 401, 'MISSING_API_KEY');
    // Each cookie alone is still its own session: nothing was ended by the refusals.
    expect((await withCookie(own.token, 'GET', '/sessions/current')).body.account.id).toBe(victim.accountId);
    // Signing in with both ends both and removes the narrower one: the new cookie is the only one left.
    const again = await api('POST', '/sessions', { body: { apiKey: victim.key }, headers: { cookie: both } });
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    const lines = again.headers.getSetCookie();
    expect(lines).toContainEqual(expect.stringMatching(/^hallmark_session=; .*Path=\/api\/v1; Max-Age=0/));
    expect(lines.filter((line) => /^hallmark_session=[0-9a-f]{64}; .*Path=\/(;|$)/.test(line))).toHaveLength(1);
    expect(
      lines.some((line) => /Path=\/; Max-Age=0/.test(line)),
      'the new cookie is not removed beside it',
    ).toBe(false);
    expectError(await withCookie(planted.token, 'GET', '/sessions/current'), 401, 'MISSING_API_KEY');
    expectError(await withCookie(own.token, 'GET', '/sessions/current'), 401, 'MISSING_API_KEY');
    // Signing out with two ends both.
    const mine = await signIn(victim.key);
    const theirs = await signIn(thief.key);
    const out = await withCookie(mine.token, 'DELETE', '/sessions/current', {
      headers: { cookie: `hallmark_session=${theirs.token}; hallmark_session=${mine.token}` },
    });
    expect(out.status).toBe(204);
    expect(out.headers.getSetCookie()).toContainEqual(expect.stringMatching(/^hallmark_session=; .*Path=\/api\/v1; Max-Age=0/));
    expectError(await withCookie(mine.token, 'GET', '/sessions/current'), 401, 'MISSING_API_KEY');
    expectError(await withCookie(theirs.token, 'GET', '/sessions/current'), 401, 'MISSING_API_KEY');
    // The request's path names the paths cleared, never attributes: a `;` in it ends the prefixes.
    const crafted = await withCookie(own.token, 'GET', '/codes/x;Domain=localhost;Max-Age=9', { headers: { cookie: both } });
    const craftedLines = crafted.headers.getSetCookie();
    expect(craftedLines).toContainEqual(expect.stringMatching(/^hallmark_session=; .*Path=\/api\/v1\/codes; Max-Age=0/));
    for (const line of craftedLines) expect(line).not.toMatch(/Domain=|Max-Age=9/);
  });

  it('stores only a hash of the token', async () => {
    const tenant = await newTenant();
    const { token } = await signIn(tenant.key);
    const rows = await t.product.db.query<Json>('SELECT * FROM console_sessions WHERE key_id = $1', [tenant.keyId]);
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(token);
  });

  it('ends the sessions of a key revoked through the API within a second', async () => {
    const tenant = await newTenant();
    const other = await api('POST', '/keys', { key: tenant.key, body: { name: 'to revoke', scopes: ['keys:read'] } });
    const { token } = await signIn(other.body.secret);
    expect((await withCookie(token, 'GET', '/keys')).status).toBe(200);
    expect((await api('POST', `/keys/${other.body.id}/revoke`, { key: tenant.key })).status).toBe(200);
    const ms = await within(1_000, async () => (await withCookie(token, 'GET', '/keys')).status === 401);
    expect(ms).toBeLessThan(1_000);
    expectError(await withCookie(token, 'GET', '/sessions/current'), 401, 'MISSING_API_KEY');
  });

  it('ends the sessions of a key revoked by plain SQL (no broadcast) within a second', async () => {
    const tenant = await newTenant();
    const other = await api('POST', '/keys', { key: tenant.key, body: { name: 'to revoke by SQL', scopes: ['keys:read'] } });
    const { token } = await signIn(other.body.secret);
    // Cached by the authenticator now.
    expect((await withCookie(token, 'GET', '/keys')).status).toBe(200);
    expect((await withCookie(token, 'GET', '/keys')).status).toBe(200);
    await t.product.db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [other.body.id]);
    const refused = await withCookie(token, 'GET', '/keys');
    // Refused at once or within the epoch poll (500 ms).
    if (refused.status !== 401) {
      const ms = await within(1_000, async () => (await withCookie(token, 'GET', '/keys')).status === 401);
      expect(ms).toBeLessThan(1_000);
    }
    expectError(await withCookie(token, 'GET', '/sessions/current'), 401, 'MISSING_API_KEY');
  });

  it('ends the sessions of a key within a second of the key’s expiry', async () => {
    const tenant = await newTenant();
    const other = await api('POST', '/keys', { key: tenant.key, body: { name: 'expiring', scopes: ['keys:read'] } });
    const { token } = await signIn(other.body.secret);
    expect((await withCookie(token, 'GET', '/keys')).status).toBe(200);
    // The key's expiry comes 3 s from now (set as an operator would, in the database).
    const expiresAt = Date.now() + 3_000;
    await t.product.db.query('UPDATE api_keys SET expires_at = to_timestamp($2::double precision / 1000) WHERE id = $1', [
      other.body.id,
      expiresAt,
    ]);
    expect((await withCookie(token, 'GET', '/keys')).status).toBe(200);
    // Refused from the first request sent a second after the expiry on (its answer's own time not counted).
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt + 1_000 - Date.now())));
    expect((await withCookie(token, 'GET', '/keys')).status).toBe(401);
    expect((await withCookie(token, 'GET', '/sessions/current')).status).toBe(401);
  });

  it('ends a session 30 minutes after its last use, and moves that at most once a minute', async () => {
    const tenant = await newTenant();
    const { token, body } = await signIn(tenant.key);
    const idleAtStart = body.session.idleExpiresAt;
    // A use within the minute writes nothing: the idle expiry stays.
    t.clock.advance(20_000);
    expect((await withCookie(token, 'GET', '/sessions/current')).body.session.idleExpiresAt).toBe(idleAtStart);
    // Used again 20 minutes on: the idle expiry moves to 30 minutes after that use.
    t.clock.advance(20 * 60_000);
    const used = await withCookie(token, 'GET', '/keys');
    expect(used.status).toBe(200);
    const moved = (await withCookie(token, 'GET', '/sessions/current')).body.session.idleExpiresAt;
    expect(new Date(moved).getTime()).toBeGreaterThan(new Date(idleAtStart).getTime() + 19 * 60_000);
    // 29 minutes later (49 after sign-in) it still lives; 31 minutes after its last use it does not.
    t.clock.advance(29 * 60_000);
    expect((await withCookie(token, 'GET', '/keys')).status).toBe(200);
    t.clock.advance(31 * 60_000);
    const ended = await withCookie(token, 'GET', '/sessions/current');
    expectError(ended, 401, 'MISSING_API_KEY');
    expect(ended.headers.get('set-cookie')).toMatch(/^hallmark_session=; /);
    expectError(await withCookie(token, 'GET', '/keys'), 401, 'MISSING_API_KEY');
  });

  it('ends a session 12 hours after sign-in however busy it is', async () => {
    const tenant = await newTenant();
    const { token } = await signIn(tenant.key);
    // Used every 25 minutes: never idle, for 11 h 40 min.
    for (let step = 0; step < 28; step++) {
      t.clock.advance(25 * 60_000);
      expect((await withCookie(token, 'GET', '/keys')).status, `after ${(step + 1) * 25} min`).toBe(200);
    }
    t.clock.advance(25 * 60_000);
    expectError(await withCookie(token, 'GET', '/keys'), 401, 'MISSING_API_KEY');
  });

  it('counts cookies that are no session toward the address’s failed-authentication limit, on the API and on /sessions/current', async () => {
    const tenant = await newTenant();
    const { token } = await signIn(tenant.key);
    // All in one clock minute that nothing else has counted in (see the test below).
    const nowMs = t.clock.now().getTime();
    const minute = Math.floor(nowMs / 60_000) + 1;
    t.clock.advance(minute * 60_000 + 100 - nowMs);
    const from = { headers: { 'x-forwarded-for': '198.51.100.77' } };
    const madeUp = () => randomBytes(32).toString('hex');
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 4; attempt++) statuses.push((await withCookie(madeUp(), 'GET', '/keys', from)).status);
    for (let attempt = 0; attempt < 3; attempt++)
      statuses.push((await withCookie(madeUp(), 'GET', '/sessions/current', from)).status);
    // HALLMARK_AUTH_FAILURES_PER_MINUTE is 5 in this suite.
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
    const limited = await withCookie(madeUp(), 'GET', '/keys', from);
    expectError(limited, 429, 'RATE_LIMITED');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Math.floor(t.clock.now().getTime() / 60_000), 'all the attempts in one minute').toBe(minute);
    // A live session from the same address is still served.
    expect((await withCookie(token, 'GET', '/keys', from)).status).toBe(200);
  });

  it('counts failed sign-ins toward the address’s failed-authentication limit', async () => {
    const tenant = await newTenant();
    // The limit counts per clock minute: move the product's clock just past the start of a minute
    // it has not been in, so that all the attempts below fall in that one minute (a minute's end
    // in between would give a fresh count) and no earlier failure counts in it.
    const nowMs = t.clock.now().getTime();
    const minute = Math.floor(nowMs / 60_000) + 1;
    t.clock.advance(minute * 60_000 + 100 - nowMs);
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 7; attempt++) {
      statuses.push((await api('POST', '/sessions', { body: { apiKey: `svc_live_${'b'.repeat(64)}` } })).status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
    const limited = await api('POST', '/sessions', { body: { apiKey: `svc_live_${'c'.repeat(64)}` } });
    expectError(limited, 429, 'RATE_LIMITED');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Math.floor(t.clock.now().getTime() / 60_000), 'all the attempts in one minute').toBe(minute);
    // A right key from the same address still signs in.
    await signIn(tenant.key);
  });
});
