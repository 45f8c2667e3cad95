// The console's sessions under attack (docs/SECURITY.md, "Console sessions"; issue #20), against
// one embedded product over real HTTP and in real headless Chromium: forged requests from another
// origin's page (same-site on another port, and another site), session fixation and token
// guessing, another tenant's resources, scopes, revocation and expiry, the console's CSP and
// framing, and hostile sign-in bodies.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call, startTestProduct, type TestProduct } from '../support/embedded.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let t: TestProduct;
let operator: string;
let browser: Browser;
let attacker: Server;
let attackerPort = 0;
/** Every session token and API key secret this suite saw: none may appear in the product's logs. */
const secrets = new Set<string>();

const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(t.url, method, `/api/v1${path}`, options);

/** A request with the session cookie, as the console sends it (its header and its own Origin). */
const asConsole = (token: string, method: string, path: string, body?: unknown) =>
  api(method, path, {
    ...(body !== undefined ? { body } : {}),
    headers: { cookie: `hallmark_session=${token}`, 'x-hallmark-console': '1', origin: t.url },
  });

function expectError(response: ApiResponse, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error?.code).toBe(code);
}

async function newTenant(environment: 'live' | 'test' = 'live') {
  const created = await api('POST', '/accounts', {
    key: operator,
    body: { name: `Hostile tenant ${randomBytes(3).toString('hex')}`, tier: 'enterprise', environment },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  secrets.add(created.body.apiKey.secret);
  return {
    accountId: created.body.account.id as string,
    key: created.body.apiKey.secret as string,
    keyId: created.body.apiKey.id,
  };
}

async function newKey(owner: string, body: Json): Promise<{ id: string; secret: string }> {
  const created = await api('POST', '/keys', { key: owner, body });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  secrets.add(created.body.secret);
  return { id: created.body.id, secret: created.body.secret };
}

/** Signs in over HTTP; the token from Set-Cookie. */
async function signIn(apiKey: string, headers: Record<string, string> = {}): Promise<string> {
  const response = await api('POST', '/sessions', { body: { apiKey }, headers });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  const token = /^hallmark_session=([0-9a-f]{64});/.exec(response.headers.get('set-cookie') ?? '')?.[1];
  if (!token) throw new Error('no session cookie');
  secrets.add(token);
  return token;
}

async function within(ms: number, check: () => Promise<boolean>): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const keyNames = async (owner: string): Promise<string[]> => {
  const listed = await api('GET', '/keys?limit=100', { key: owner });
  expect(listed.status, JSON.stringify(listed.body)).toBe(200);
  return (listed.body.items ?? listed.body.keys ?? listed.body).map((key: Json) => key.name);
};

/**
 * The attacker's pages, served from another port: each forges requests to `target` (the origin
 * the victim uses the console at) and writes what it could read into window.stolen.
 */
function attackerPage(path: string, target: string, attackerKey: string): string {
  const keys = `${target}/api/v1/keys`;
  const forgedKey = JSON.stringify({ name: 'csrf', scopes: ['*'] });
  switch (path) {
    case '/form-plain':
      // text/plain: the classic way to smuggle a JSON body in a form.
      return `<form id="f" method="POST" action="${keys}" enctype="text/plain"><input name='{"name":"csrf-plain","scopes":["*"],"x":"' value='"}'></form><script>f.submit()</script>`;
    case '/form-urlencoded':
      return `<form id="f" method="POST" action="${keys}"><input name="name" value="csrf-form"><input name="scopes" value="*"></form><script>f.submit()</script>`;
    case '/form-sign-in':
      // Login CSRF: signs the victim in to the attacker's account.
      return `<form id="f" method="POST" action="${target}/api/v1/sessions" enctype="text/plain"><input name='{"apiKey":"${attackerKey}","x":"' value='"}'></form><script>f.submit()</script>`;
    case '/frame':
      return `<iframe id="console" src="${target}/console/" width="800" height="600"></iframe>`;
    case '/scripted':
      return `<script>
        window.stolen = [];
        window.outcomes = {};
        // JSON hijacking: a JSON answer run as a script would set these.
        for (const name of ['id', 'secret', 'items', 'session', 'apiKey']) {
          Object.defineProperty(Object.prototype, name, { set(v) { window.stolen.push(name + '=' + JSON.stringify(v)); }, configurable: true });
        }
        const attempt = async (name, run) => {
          try { const r = await run(); window.outcomes[name] = r.type === 'opaque' ? 'opaque' : 'read ' + r.status + ' ' + (await r.text()); }
          catch (e) { window.outcomes[name] = 'refused'; }
        };
        const load = (tag, src) => new Promise((done) => {
          const el = document.createElement(tag);
          el.onload = () => done('loaded'); el.onerror = () => done('error');
          el.src = src; document.body.appendChild(el);
        });
        window.done = (async () => {
          await attempt('preflighted', () => fetch(${JSON.stringify(keys)}, { method: 'POST', credentials: 'include',
            headers: { 'x-hallmark-console': '1', 'content-type': 'application/json' }, body: ${JSON.stringify(forgedKey)} }));
          await attempt('simple', () => fetch(${JSON.stringify(keys)}, { method: 'POST', credentials: 'include', mode: 'no-cors',
            headers: { 'content-type': 'text/plain' }, body: ${JSON.stringify(forgedKey)} }));
          await attempt('read keys', () => fetch(${JSON.stringify(keys)}, { credentials: 'include' }));
          await attempt('read session', () => fetch(${JSON.stringify(`${target}/api/v1/sessions/current`)}, { credentials: 'include' }));
          await attempt('sign out', () => fetch(${JSON.stringify(`${target}/api/v1/sessions/current`)}, { method: 'DELETE', credentials: 'include' }));
          window.outcomes.beacon = String(navigator.sendBeacon(${JSON.stringify(keys)}, ${JSON.stringify(forgedKey)}));
          window.outcomes.img = await load('img', ${JSON.stringify(keys)});
          window.outcomes.script = await load('script', ${JSON.stringify(keys)});
          window.outcomes.sessionScript = await load('script', ${JSON.stringify(`${target}/api/v1/sessions/current`)});
          await new Promise((resolve) => setTimeout(resolve, 300));
        })();
      </script>`;
    default:
      return 'nothing here';
  }
}

async function startAttacker(): Promise<void> {
  attacker = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://attacker');
    const target = url.searchParams.get('target') ?? '';
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(
      `<!doctype html><html><body>${attackerPage(url.pathname, target, url.searchParams.get('key') ?? '')}</body></html>`,
    );
  });
  await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
  attackerPort = (attacker.address() as AddressInfo).port;
}

function ensureConsoleBuilt(): void {
  // Built again when a source is newer than the build: else the tests would drive an old console.
  const built = spawnSync(process.execPath, ['apps/console/scripts/build-console.mjs', '--if-stale'], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error('the console did not build');
}

beforeAll(async () => {
  ensureConsoleBuilt();
  t = await startTestProduct({
    // Sign-in is a public route limited per address and second; the failed-sign-in limit is what is attacked.
    HALLMARK_PUBLIC_RATE_LIMIT: '100000',
    HALLMARK_AUTH_FAILURES_PER_MINUTE: '40',
  });
  operator = t.product.generatedOperatorKey as string;
  secrets.add(operator);
  if ((await fetch(`${t.url}/console`)).status === 503) ensureConsoleBuilt();
  await startAttacker();
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => attacker?.close(resolve));
  await t?.stop();
});

/** A browser context signed in to the console at `consoleOrigin` through its sign-in page. */
async function victimAt(consoleOrigin: string, apiKey: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${consoleOrigin}/console/`);
  await page.getByLabel('API key').fill(apiKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  return { context, page };
}

describe('forged requests from another origin’s page, in Chromium', () => {
  const port = () => new URL(t.url).port;
  // Same site on another port: SameSite=Strict does send the cookie, so the header and Origin rule must hold.
  // Another site (localhost against 127.0.0.1): the cookie is not even sent.
  const scenarios = [
    {
      name: 'same site, another port',
      console: () => `http://127.0.0.1:${port()}`,
      evil: () => `http://127.0.0.1:${attackerPort}`,
    },
    { name: 'another site', console: () => `http://localhost:${port()}`, evil: () => `http://127.0.0.1:${attackerPort}` },
  ];

  for (const scenario of scenarios) {
    it(`creates no key, reads nothing and signs nobody in or out (${scenario.name})`, async () => {
      const victim = await newTenant();
      const intruder = await newTenant();
      const before = await keyNames(victim.key);
      const target = scenario.console();
      const { context, page } = await victimAt(target, victim.key);
      const sessionCookie = (await context.cookies()).find((cookie) => cookie.name === 'hallmark_session')?.value;
      expect(sessionCookie).toMatch(/^[0-9a-f]{64}$/);
      secrets.add(sessionCookie as string);
      const evil = await context.newPage();
      // What the API answered to every forged request, as the network saw it.
      const answered: string[] = [];
      evil.on('response', (response) => {
        if (response.url().includes('/api/v1/')) answered.push(`${response.request().method()} ${response.status()}`);
      });
      const query = `?target=${encodeURIComponent(target)}&key=${encodeURIComponent(intruder.key)}`;
      const cookieSent = scenario.name.startsWith('same site');
      for (const form of ['/form-plain', '/form-urlencoded']) {
        const answer = evil.waitForResponse((response) => response.url().endsWith('/api/v1/keys'));
        await evil.goto(`${scenario.evil()}${form}${query}`);
        const response = await answer;
        // With the cookie: refused as forged; without: no session at all.
        expect(response.status(), form).toBe(cookieSent ? 403 : 401);
        expect(((await response.json()) as Json).error.code).toBe(cookieSent ? 'CSRF_REJECTED' : 'MISSING_API_KEY');
      }
      const signInAnswer = evil.waitForResponse((response) => response.url().endsWith('/api/v1/sessions'));
      await evil.goto(`${scenario.evil()}/form-sign-in${query}`);
      // Refused for its form encoding (415) before its Origin is looked at (403); no session either way.
      const signInResponse = await signInAnswer;
      expect([403, 415]).toContain(signInResponse.status());
      expect(await signInResponse.headerValue('set-cookie')).toBeNull();

      await evil.goto(`${scenario.evil()}/scripted${query}`);
      await evil.evaluate('window.done');
      const outcomes = (await evil.evaluate('window.outcomes')) as Json;
      const stolen = (await evil.evaluate('window.stolen')) as string[];
      expect(outcomes.preflighted).toBe('refused');
      expect(outcomes.simple).toBe('opaque');
      expect(outcomes['read keys']).toBe('refused');
      expect(outcomes['read session']).toBe('refused');
      expect(outcomes['sign out']).toBe('refused');
      expect(outcomes.img).toBe('error');
      // JSON is no script: the browser refuses to run it, and the traps on Object.prototype caught nothing.
      expect(outcomes.script).toBe('error');
      expect(outcomes.sessionScript).toBe('error');
      expect(stolen).toEqual([]);
      // Two forms, a sign-in form, a no-cors fetch and a beacon reached the API; all refused.
      expect(answered.filter((line) => line.startsWith('POST ')).length).toBeGreaterThanOrEqual(5);
      expect(answered.filter((line) => !/^\w+ 4\d\d$/.test(line))).toEqual([]);

      // Framing the console from the attacker's page: the browser refuses to show it.
      await evil.goto(`${scenario.evil()}/frame${query}`);
      await evil.waitForTimeout(500);
      const framed = evil.frames().find((frame) => frame !== evil.mainFrame());
      const framedText = framed ? await framed.evaluate('document.body ? document.body.innerText : ""').catch(() => '') : '';
      expect(framedText).not.toMatch(/Sign out|Sign in/);
      expect(framed?.url() ?? '').not.toContain('/console');

      // Nothing changed: no new key, and the victim is still signed in as themselves.
      expect(await keyNames(victim.key)).toEqual(before);
      const cookieAfter = (await context.cookies()).find((cookie) => cookie.name === 'hallmark_session')?.value;
      expect(cookieAfter).toBe(sessionCookie);
      const current = await api('GET', '/sessions/current', { headers: { cookie: `hallmark_session=${cookieAfter}` } });
      expect(current.status).toBe(200);
      expect(current.body.account.id).toBe(victim.accountId);
      await page.reload();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      await context.close();
    });
  }

  it('answers the API with no CORS grant, nosniff and JSON, so a cross-origin read or script gets nothing', async () => {
    const tenant = await newTenant();
    const token = await signIn(tenant.key);
    const evil = `http://127.0.0.1:${attackerPort}`;
    const preflight = await fetch(`${t.url}/api/v1/keys`, {
      method: 'OPTIONS',
      headers: {
        origin: evil,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-hallmark-console,content-type',
      },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    expect(preflight.headers.get('access-control-allow-credentials')).toBeNull();
    for (const path of ['/keys', '/sessions/current', '/accounts/me']) {
      const read = await fetch(`${t.url}/api/v1${path}`, { headers: { cookie: `hallmark_session=${token}`, origin: evil } });
      expect(read.status, path).toBe(200);
      expect(read.headers.get('access-control-allow-origin'), path).toBeNull();
      expect(read.headers.get('content-type'), path).toMatch(/^application\/json/);
      expect(read.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(read.headers.get('cache-control'), path).toContain('no-store');
    }
  });
});

describe('session fixation and token guessing', () => {
  it('accepts no cookie value the attacker chose, and signing in replaces it with a new token', async () => {
    const tenant = await newTenant();
    const planted = randomBytes(32).toString('hex');
    expectError(await asConsole(planted, 'GET', '/sessions/current'), 401, 'MISSING_API_KEY');
    expectError(await asConsole(planted, 'GET', '/keys'), 401, 'MISSING_API_KEY');
    const token = await signIn(tenant.key, { cookie: `hallmark_session=${planted}` });
    expect(token).not.toBe(planted);
    expectError(await asConsole(planted, 'GET', '/keys'), 401, 'MISSING_API_KEY');
    // Odd spellings of a cookie are no session either.
    for (const cookie of [
      `hallmark_session=${planted.toUpperCase()}`,
      `Hallmark_Session=${token}`,
      `hallmark_session="${token}"`,
    ]) {
      const response = await api('GET', '/keys', { headers: { cookie } });
      expect(response.status, cookie).toBe(401);
    }
    // A second sign-in is a new token; the one it replaced ends.
    const again = await signIn(tenant.key, { cookie: `hallmark_session=${token}` });
    expect(again).not.toBe(token);
    expectError(await asConsole(token, 'GET', '/keys'), 401, 'MISSING_API_KEY');
    expect((await asConsole(again, 'GET', '/keys')).status).toBe(200);
  });

  it('takes a session token only as the cookie: not as x-api-key, a bearer token or in the query', async () => {
    const tenant = await newTenant();
    const token = await signIn(tenant.key);
    expectError(await api('GET', '/keys', { key: token }), 401, 'INVALID_API_KEY');
    expect((await api('GET', '/keys', { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
    for (const query of [`hallmark_session=${token}`, `token=${token}`, `session=${token}`]) {
      const response = await api('GET', `/keys?${query}`);
      expect([400, 401], query).toContain(response.status);
    }
    // x-api-key wins over the cookie: a bad key beside a good cookie is refused, not rescued.
    const both = await api('GET', '/keys', { key: 'svc_live_nope', headers: { cookie: `hallmark_session=${token}` } });
    expect(both.status).toBe(401);
  });
});

describe('another tenant', () => {
  it('reaches none of another account’s keys, codes, reports, blocks or scans, and cannot tell them from missing ones', async () => {
    const a = await newTenant();
    const b = await newTenant();
    const gtin = '09506000134369';
    expect((await api('POST', `/accounts/${b.accountId}/gtins`, { key: operator, body: { gtin } })).status).toBe(201);
    const code = await api('POST', '/code/generate', { key: b.key, body: { gtin, serialNumber: 'B-1' } });
    expect(code.status, JSON.stringify(code.body)).toBe(201);
    expect((await api('POST', '/code/verify', { key: b.key, body: { url: code.body.url } })).status).toBe(200);
    const report = await api('POST', '/code/report', { key: b.key, body: { url: code.body.url, reason: 'seen' } });
    expect(report.status, JSON.stringify(report.body)).toBe(201);
    const block = await api('POST', '/blocklist', { key: b.key, body: { gtin, serial: 'B-2', kind: 'counterfeit' } });
    expect(block.status, JSON.stringify(block.body)).toBe(201);
    const bKey = await newKey(b.key, { name: 'b reader', scopes: ['keys:read'] });
    const reportId = report.body.reportId ?? report.body.id;
    const blockId = block.body.blockId;

    const session = await signIn(a.key);
    const probes: Array<[string, string, (id: string) => string, string, unknown]> = [
      ['GET', 'code', (id) => `/codes/${id}`, code.body.assetId, undefined],
      ['POST', 'revoke key', (id) => `/keys/${id}/revoke`, bKey.id, undefined],
      ['POST', 'rotate key', (id) => `/keys/${id}/rotate`, b.keyId, { graceSeconds: 0 }],
      ['POST', 'confirm report', (id) => `/code/reports/${id}/confirm`, reportId, {}],
      ['DELETE', 'unblock', (id) => `/blocklist/${id}`, blockId, undefined],
      ['GET', 'compliance export', (id) => `/compliance/${id}/export`, code.body.assetId, undefined],
    ];
    for (const [method, name, path, theirs, body] of probes) {
      const answer = await asConsole(session, method, path(theirs), body);
      expectError(answer, 404, 'NOT_FOUND');
      // A made-up id of the same shape answers the same: nothing says B's exists.
      const madeUp = `${theirs.slice(0, -4)}0000` === theirs ? `${theirs.slice(0, -4)}1111` : `${theirs.slice(0, -4)}0000`;
      const missing = await asConsole(session, method, path(madeUp), body);
      expect([missing.status, missing.body.error?.code], name).toEqual([answer.status, answer.body.error?.code]);
    }
    const scans = await asConsole(session, 'GET', `/scans?gtin=${gtin}`);
    expect(scans.status).toBe(200);
    expect(JSON.stringify(scans.body)).not.toContain('B-1');
    const keys = await asConsole(session, 'GET', '/keys');
    expect(JSON.stringify(keys.body)).not.toContain(bKey.id);
    // B's things are untouched.
    expect((await api('GET', '/keys', { key: bKey.secret })).status).toBe(200);
    expect((await api('GET', `/codes/${code.body.assetId}`, { key: b.key })).status).toBe(200);
    expect(JSON.stringify((await api('GET', '/blocklist', { key: b.key })).body)).toContain(blockId);
  });
});

describe('scopes', () => {
  it('lets a session do only what its key may: no key changes without keys:write, no live for a test key, no wider rotation', async () => {
    const tenant = await newTenant();
    const reader = await newKey(tenant.key, { name: 'reader', scopes: ['keys:read', 'assets:read'] });
    const session = await signIn(reader.secret);
    expectError(await asConsole(session, 'POST', '/keys', { name: 'mine', scopes: ['*'] }), 403, 'INSUFFICIENT_SCOPE');
    expectError(await asConsole(session, 'POST', `/keys/${reader.id}/rotate`, { graceSeconds: 0 }), 403, 'INSUFFICIENT_SCOPE');
    expectError(await asConsole(session, 'POST', `/keys/${tenant.keyId}/revoke`), 403, 'INSUFFICIENT_SCOPE');
    expectError(await asConsole(session, 'POST', '/accounts', { name: 'x', tier: 'free' }), 403, 'INSUFFICIENT_SCOPE');

    // A key that may write keys but holds nothing else makes no stronger key, and rotation keeps its scopes.
    const writer = await newKey(tenant.key, { name: 'writer', scopes: ['keys:write', 'keys:read'] });
    const writerSession = await signIn(writer.secret);
    const stronger = await asConsole(writerSession, 'POST', '/keys', { name: 'stronger', scopes: ['*'] });
    expect(stronger.status, JSON.stringify(stronger.body)).toBe(403);
    const widened = await asConsole(writerSession, 'POST', `/keys/${writer.id}/rotate`, { graceSeconds: 900, scopes: ['*'] });
    if (widened.status === 201) {
      secrets.add(widened.body.secret);
      expect(widened.body.scopes).toEqual(['keys:write', 'keys:read']);
    } else {
      expectError(widened, 400, 'VALIDATION_ERROR');
    }
    // The session of a key claiming operator powers in its body is still the key's.
    const claimed = await api('POST', '/sessions', { body: { apiKey: reader.secret, isOperator: true, scopes: ['*'] } });
    if (claimed.status === 201)
      expect(claimed.body.key).toMatchObject({ isOperator: false, scopes: ['keys:read', 'assets:read'] });
    else expectError(claimed, 400, 'VALIDATION_ERROR');

    const testTenant = await newTenant('test');
    const testSession = await signIn(testTenant.key);
    expectError(await asConsole(testSession, 'PATCH', '/sessions/current', { environment: 'live' }), 403, 'INSUFFICIENT_SCOPE');
    expectError(await asConsole(testSession, 'PATCH', '/sessions/current', { environment: 'prod' }), 400, 'VALIDATION_ERROR');
    expect((await asConsole(testSession, 'GET', '/sessions/current')).body.session.environment).toBe('test');
  });
});

describe('revocation and expiry', () => {
  it('refuses a revoked key’s session within a second, and a key rotated with no grace ends its sessions', async () => {
    const tenant = await newTenant();
    const doomed = await newKey(tenant.key, { name: 'doomed', scopes: ['keys:read'] });
    const session = await signIn(doomed.secret);
    expect((await asConsole(session, 'GET', '/keys')).status).toBe(200);
    expect((await api('POST', `/keys/${doomed.id}/revoke`, { key: tenant.key })).status).toBe(200);
    await within(1000, async () => (await asConsole(session, 'GET', '/keys')).status === 401);

    const rotating = await newKey(tenant.key, { name: 'rotating', scopes: ['keys:read'] });
    const rotatingSession = await signIn(rotating.secret);
    expect((await asConsole(rotatingSession, 'GET', '/keys')).status).toBe(200);
    const rotated = await api('POST', `/keys/${rotating.id}/rotate`, { key: tenant.key, body: { graceSeconds: 0 } });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(201);
    secrets.add(rotated.body.secret);
    await within(1000, async () => (await asConsole(rotatingSession, 'GET', '/keys')).status === 401);
    expect((await asConsole(rotatingSession, 'GET', '/sessions/current')).status).toBe(401);
  });

  it('ends a session 12 hours after sign-in though it is used every minute', async () => {
    const tenant = await newTenant();
    const session = await signIn(tenant.key);
    for (let minute = 1; minute < 12 * 60; minute += 1) {
      t.clock.advance(60_000);
      const used = await asConsole(session, 'GET', '/sessions/current');
      if (used.status !== 200) throw new Error(`refused after ${minute} minutes: ${JSON.stringify(used.body)}`);
    }
    t.clock.advance(60_000);
    expectError(await asConsole(session, 'GET', '/sessions/current'), 401, 'MISSING_API_KEY');
    expectError(await asConsole(session, 'GET', '/keys'), 401, 'MISSING_API_KEY');
  }, 60_000);
});

describe('the console page', () => {
  it('forbids inline script and framing, and loads without a CSP refusal or a request off loopback', async () => {
    for (const path of ['/console', '/console/', '/console/keys', '/console/no/such/page']) {
      const response = await fetch(`${t.url}${path}`);
      expect(response.status, path).toBe(200);
      const policy = response.headers.get('content-security-policy') ?? '';
      expect(policy, path).toContain("frame-ancestors 'none'");
      expect(policy, path).toMatch(/script-src 'self'(;|$)/);
      expect(policy, path).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
      expect(response.headers.get('x-frame-options'), path).toBe('DENY');
      expect(response.headers.get('x-content-type-options'), path).toBe('nosniff');
    }
    const tenant = await newTenant();
    const context = await browser.newContext();
    const page = await context.newPage();
    const refusals: string[] = [];
    const offLoopback: string[] = [];
    await page.addInitScript(
      "document.addEventListener('securitypolicyviolation', (event) => console.error('securitypolicyviolation ' + event.violatedDirective + ' ' + event.blockedURI))",
    );
    page.on('console', (message) => {
      // (The 401 of the signed-out page's first look at its session is an error message too, and no refusal.)
      if (/securitypolicyviolation|Content Security Policy|Refused to/i.test(message.text())) refusals.push(message.text());
    });
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (!['data:', 'blob:'].includes(url.protocol) && !['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) {
        offLoopback.push(request.url());
      }
    });
    await page.goto(`${t.url}/console/`);
    await page.getByLabel('API key').fill(tenant.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    for (const path of ['/', '/keys', '/codes']) {
      await page.goto(`${t.url}/console${path}`);
      await page.locator('main h1').first().waitFor();
    }
    expect(refusals).toEqual([]);
    expect(offLoopback).toEqual([]);
    // An injected inline script (what an XSS would add) does not run, and the refusal is seen.
    await page.evaluate(
      "const injected = document.createElement('script'); injected.textContent = 'window.injectedRan = true'; document.body.appendChild(injected)",
    );
    await expect.poll(() => refusals.length).toBeGreaterThan(0);
    expect(refusals.join('\n')).toMatch(/script-src/);
    expect(await page.evaluate('window.injectedRan === undefined')).toBe(true);
    await context.close();
  });
});

describe('hostile sign-in bodies', () => {
  it('answers huge, mistyped, missing and prototype-polluting bodies with 4xx envelopes, never a 500', async () => {
    const tenant = await newTenant();
    const post = (body: string, contentType = 'application/json') =>
      fetch(`${t.url}/api/v1/sessions`, { method: 'POST', headers: { 'content-type': contentType }, body });
    const cases: Array<[string, string, string?]> = [
      ['huge', JSON.stringify({ apiKey: 'k'.repeat(8 * 1024 * 1024) })],
      ['long key', JSON.stringify({ apiKey: `svc_live_${'0'.repeat(10_000)}` })],
      ['number', '{"apiKey":123}'],
      ['array', '{"apiKey":["a"]}'],
      ['object', '{"apiKey":{"toString":"x"}}'],
      ['null', '{"apiKey":null}'],
      ['missing', '{}'],
      ['empty', ''],
      ['not JSON', '{"apiKey":'],
      ['body null', 'null'],
      ['body array', `[${JSON.stringify(tenant.key)}]`],
      ['form', `apiKey=${tenant.key}`, 'application/x-www-form-urlencoded'],
      ['text', JSON.stringify({ apiKey: tenant.key }), 'text/plain'],
      ['proto', '{"apiKey":"svc_live_nope","__proto__":{"isOperator":true,"polluted":"yes"}}'],
      ['constructor', '{"apiKey":"svc_live_nope","constructor":{"prototype":{"isOperator":true,"polluted":"yes"}}}'],
      ['deep', `${'{"a":'.repeat(200)}1${'}'.repeat(200)}`],
    ];
    for (const [name, body, contentType] of cases) {
      const response = await post(body, contentType);
      expect(response.status, name).toBeGreaterThanOrEqual(400);
      expect(response.status, name).toBeLessThan(500);
      const text = await response.text();
      expect(typeof (JSON.parse(text) as Json).error?.code, name).toBe('string');
      // The key sent is never echoed in the refusal.
      expect(text.includes(tenant.key), name).toBe(false);
      expect(response.headers.get('set-cookie'), name).toBeNull();
    }
    // A real key beside a polluting __proto__: signed in as the key, nothing more.
    const polluted = await post(`{"apiKey":${JSON.stringify(tenant.key)},"__proto__":{"isOperator":true,"scopes":["*"]}}`);
    if (polluted.status === 201) {
      const answer = (await polluted.json()) as Json;
      expect(answer.key.isOperator).toBe(false);
      const token = /hallmark_session=([0-9a-f]{64})/.exec(polluted.headers.get('set-cookie') ?? '')?.[1] as string;
      secrets.add(token);
      expectError(await asConsole(token, 'POST', '/accounts', { name: 'x', tier: 'free' }), 403, 'INSUFFICIENT_SCOPE');
    } else {
      expect(polluted.status).toBe(400);
      // Valid JSON, refused for its key: the answer names the key, not only "not valid JSON".
      expect(((await polluted.json()) as Json).error).toMatchObject({
        code: 'VALIDATION_ERROR',
        message: expect.stringContaining('__proto__'),
      });
    }
    // The embedded product runs in this process: its Object.prototype is ours.
    expect(({} as Json).polluted).toBeUndefined();
    expect(({} as Json).isOperator).toBeUndefined();
  });

  it('answers 1,000 wrong keys from one address with 401 then 429 RATE_LIMITED and Retry-After, never a 500; a real key still signs in', async () => {
    const tenant = await newTenant();
    const statuses = new Map<number, number>();
    let limited: Response | undefined;
    // The limit counts per clock minute: a run that crosses a minute's end meets a fresh count.
    const firstMinute = Math.floor(Date.now() / 60_000);
    for (let round = 0; round < 20; round += 1) {
      const answers = await Promise.all(
        Array.from({ length: 50 }, () =>
          fetch(`${t.url}/api/v1/sessions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ apiKey: `svc_live_${randomBytes(32).toString('hex')}` }),
          }),
        ),
      );
      for (const answer of answers) {
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        if (answer.status === 429) limited = answer;
        else await answer.arrayBuffer();
      }
    }
    const minutesSpanned = Math.floor(Date.now() / 60_000) - firstMinute + 1;
    expect([...statuses.keys()].sort()).toEqual([401, 429]);
    expect(statuses.get(401)).toBeLessThanOrEqual(40 * minutesSpanned);
    if (!limited) throw new Error('never limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await limited.json()) as Json).error.code).toBe('RATE_LIMITED');
    // Another address claimed in X-Forwarded-For (no proxy is trusted) is still this one.
    const spoofed = await api('POST', '/sessions', {
      body: { apiKey: 'svc_live_nope' },
      headers: { 'x-forwarded-for': '203.0.113.9' },
    });
    expectError(spoofed, 429, 'RATE_LIMITED');
    await signIn(tenant.key);
  });
});

describe('logs', () => {
  it('never hold a session token or an API key secret', () => {
    expect(secrets.size).toBeGreaterThan(10);
    const logs = t.logLines.join('\n');
    expect(logs.length).toBeGreaterThan(0);
    for (const secret of secrets) expect(logs.includes(secret), `${secret.slice(0, 12)}… logged`).toBe(false);
    // Nor any 64-hex string that is a live cookie's value in a Cookie header.
    expect(logs).not.toMatch(/hallmark_session=[0-9a-f]{64}/);
  });
});
