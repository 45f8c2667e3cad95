// Issue #16, item 4: limits a tenant cannot multiply by minting keys, keys that cannot turn on
// stronger keys, guessing keys that gets slowed down, and public routes that each have a
// per-address limit. Every attack here is made over HTTP, as an outsider or a tenant would, in
// both forms.
//
// The limits count in fixed windows (a second, a minute, a UTC day). The embedded form's tests hold
// its clock at a moment of their own; the distributed form runs on the machine's clock, so there a
// test starts early in the current window, sends from a loopback address no other test used (the
// per-address limits), and, for one-second windows, runs again when its requests did not all fall
// in the second they started in. Retry-After is checked against the product's clock around the
// request: exact in the embedded form, within the request's own duration in the distributed one.
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { createPostgresDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AddressedResponse, callFrom, earlyInWindow, fetchFrom, newClientAddress } from '../support/client-address.ts';
import { type RunningProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { type ApiResponse, type EmbeddedRunningProduct, startEmbeddedProduct } from '../support/embedded.ts';

/** The form under test (each form's block sets it before its tests run). */
let product: RunningProduct;
let operator: string;

const gtin = '09506000134376';
const dayMs = 86_400_000;

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;
/** A request to the API; `from` is the client address it is sent from (127.0.0.1 unless given). */
const api = <T = Json>(method: string, path: string, options: Parameters<typeof callFrom>[4] & { from?: string } = {}) => {
  const { from = '127.0.0.1', ...rest } = options;
  return callFrom<T>(from, product.url, method, `/api/v1${path}`, rest);
};

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

const embedded = () => (product.form === 'embedded' ? (product as EmbeddedRunningProduct).test : undefined);
/** The product's clock, in ms. */
const productNow = () => embedded()?.clock.now().getTime() ?? Date.now();

/**
 * Runs `body` inside one window of `windowMs` (a minute or a day), with the client address it is
 * to send from: the embedded form holds its clock at `moment` and sends from 127.0.0.1; the
 * distributed form waits until the window has `neededMs` left and sends from an address of its own.
 */
async function within<T>(moment: string, windowMs: number, neededMs: number, body: (from: string) => Promise<T>): Promise<T> {
  const test = embedded();
  if (test) {
    test.clock.freeze(new Date(moment));
    try {
      return await body('127.0.0.1');
    } finally {
      test.clock.freeze(undefined);
    }
  }
  const window = await earlyInWindow(windowMs, neededMs);
  const result = await body(newClientAddress());
  if (Math.floor(Date.now() / windowMs) !== window) throw new Error(`the test outlasted its ${neededMs} ms in the window`);
  return result;
}

/**
 * Runs `run` (after `prepare`, outside the window) with all its requests in one second, and
 * answers what it found, for the caller to check: the embedded form holds its clock at `moment`;
 * the distributed form starts at the beginning of a second, from an address of its own, and runs
 * again (prepared afresh) when the requests spilled into the next second, up to five times.
 */
async function inOneSecond<P, T>(
  moment: string,
  prepare: () => Promise<P>,
  run: (prepared: P, from: string) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const prepared = await prepare();
    const test = embedded();
    if (test) {
      test.clock.freeze(new Date(moment));
      try {
        return await run(prepared, '127.0.0.1');
      } finally {
        test.clock.freeze(undefined);
      }
    }
    const from = newClientAddress();
    const second = await earlyInWindow(1_000, 1_000, 5);
    const result = await run(prepared, from);
    if (Math.floor(Date.now() / 1_000) === second) return result;
    if (attempt === 5) throw new Error('five runs in a row spilled into the next second: the machine is too slow for this test');
  }
}

/** Moves on to the next second: the embedded form's held clock by a second, the machine's by waiting for it. */
async function nextSecond(): Promise<void> {
  const test = embedded();
  if (test) {
    test.clock.freeze(new Date(test.clock.now().getTime() + 1_000));
    return;
  }
  await new Promise((resolve) => setTimeout(resolve, 1_000 - (Date.now() % 1_000) + 5));
}

/** Sends `request` and checks its Retry-After is the time to `untilMs` on the product's clock, in whole seconds rounded up. */
async function expectRetryAfterUntil<R extends { headers: Headers }>(untilMs: number, request: () => Promise<R>): Promise<R> {
  const before = productNow();
  const response = await request();
  const after = productNow();
  const retryAfter = Number(response.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(Math.ceil((untilMs - after) / 1000));
  expect(retryAfter).toBeLessThanOrEqual(Math.ceil((untilMs - before) / 1000));
  return response;
}

/** The distributed form: sets an API key's expiry an hour back in the product's PostgreSQL. */
async function expireInDatabase(keyId: string): Promise<void> {
  if (!product.databaseUrl) return;
  const db = createPostgresDatabase({ connectionString: product.databaseUrl, maxConnections: 1 });
  try {
    await db.query("UPDATE api_keys SET expires_at = now() - interval '1 hour' WHERE id = $1", [keyId]);
  } finally {
    await db.close();
  }
}

/**
 * Sends the head of a POST that declares a body of `declaredBytes` and only its first `sentBytes`,
 * over a raw connection from `from`, and answers the response's status line and body if one comes
 * before `waitMs` (the body still unsent), or undefined if none does. A gateway that reads a body
 * before refusing a request answers nothing here.
 */
async function answerBeforeBody(
  from: string,
  path: string,
  headers: Record<string, string>,
  { declaredBytes, sentBytes, waitMs }: { declaredBytes: number; sentBytes: number; waitMs: number },
): Promise<{ statusLine: string; body: string } | undefined> {
  const { port, hostname } = new URL(product.url);
  const socket = connect({ host: hostname, port: Number(port), localAddress: from });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve).once('error', reject);
  });
  let received = '';
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('latin1');
  });
  socket.on('error', () => {});
  const head = [
    `POST /api/v1${path} HTTP/1.1`,
    `Host: ${hostname}:${port}`,
    'Content-Type: application/json',
    `Content-Length: ${declaredBytes}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    '',
    '',
  ].join('\r\n');
  socket.write(head);
  socket.write(`{"items":[${' '.repeat(Math.max(0, sentBytes - 10))}`);
  const deadline = Date.now() + waitMs;
  try {
    while (Date.now() < deadline) {
      const end = received.indexOf('\r\n\r\n');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(received)?.[1] ?? Number.NaN);
      if (end >= 0 && received.length >= end + 4 + length) {
        return { statusLine: received.slice(0, received.indexOf('\r\n')), body: received.slice(end + 4, end + 4 + length) };
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return undefined;
  } finally {
    socket.destroy();
  }
}

const unknownKey = () => `svc_live_${randomBytes(32).toString('hex')}`;

describe.each([
  ['embedded', startEmbeddedProduct],
  ['distributed', () => startDistributedProduct()],
])('limits against a hostile tenant (%s form)', (_form, start: () => Promise<RunningProduct>) => {
  beforeAll(async () => {
    product = await start();
    operator = product.operatorKey;
  });

  afterAll(async () => {
    await product?.stop();
  });

  describe('limits belong to the account and environment, not to the key', () => {
    it('gives four test keys of one account 100 requests a day in all; the live key keeps its own budget', async () => {
      const { key: live } = await newTenant('starter');
      const sandboxes = await Promise.all(
        [0, 1, 2, 3].map((i) => newKey(live, { name: `sandbox ${i}`, scopes: ['keys:read'], environment: 'test' })),
      );
      await within('2032-01-05T08:00:00Z', dayMs, 30_000, async () => {
        for (let i = 0; i < 100; i++) {
          const response = await api('GET', '/keys?limit=1', { key: sandboxes[i % 4]?.secret });
          expect(response.status, JSON.stringify(response.body)).toBe(200);
          // The headers describe the account's test budget, whichever key asked.
          expect(response.headers.get('x-ratelimit-limit')).toBe('100');
          expect(response.headers.get('x-ratelimit-remaining')).toBe(String(99 - i));
        }
        for (const sandbox of sandboxes) {
          // 16 hours at 08:00 UTC (the embedded form's moment): the day ends at 00:00 UTC.
          const endOfDay = (Math.floor(productNow() / dayMs) + 1) * dayMs;
          const refused = await expectRetryAfterUntil(endOfDay, () => api('GET', '/keys?limit=1', { key: sandbox.secret }));
          expectError(refused, 429, 'RATE_LIMITED');
          expect(refused.body.error?.details).toMatchObject({ limit: 'test-key-requests-per-day' });
          // For a person the wait is in words with its end, not 57600 s (the distributed form runs on
          // the machine's clock: in the last 90 minutes of the day the wait is in minutes alone).
          expect(refused.body.error?.message).toMatch(/retry in (\d+ s|(\d+ h( \d+ min)?|\d+ min) \(at 00:00 UTC\))\.$/);
        }
        // A fifth test key minted now shares the spent budget too.
        const late = await newKey(live, { name: 'late sandbox', scopes: ['keys:read'], environment: 'test' });
        expectError(await api('GET', '/keys?limit=1', { key: late.secret }), 429, 'RATE_LIMITED');
        // The live environment of the same account is another budget.
        expect((await api('GET', '/keys?limit=1', { key: live })).status).toBe(200);
      });
    });

    it('replays a stored answer to a retry after the test requests ran out, and refuses a new request', async () => {
      const { key: live } = await newTenant('starter');
      const sandbox = await newKey(live, { name: 'sandbox', scopes: ['keys:read', 'keys:write'], environment: 'test' });
      const body = { name: 'made in the sandbox', scopes: ['keys:read'], environment: 'test' };
      const idempotencyKey = randomBytes(8).toString('hex');
      await within('2032-01-05T09:00:00Z', dayMs, 30_000, async (from) => {
        const made = await api('POST', '/keys', {
          key: sandbox.secret,
          body,
          headers: { 'idempotency-key': idempotencyKey },
          from,
        });
        expect(made.status, JSON.stringify(made.body)).toBe(201);
        for (let i = 1; i < 100; i++) {
          const response = await api('GET', '/keys?limit=1', { key: sandbox.secret, from });
          expect(response.status, JSON.stringify(response.body)).toBe(200);
        }
        // The day's test requests are spent, and the gateway has seen the account refused.
        expectError(await api('GET', '/keys?limit=1', { key: sandbox.secret, from }), 429, 'RATE_LIMITED');
        // The retry of the request whose answer was lost gets that answer (the secret shown once);
        // before, it was refused with the rest until midnight, when its answer had a few hours left.
        const retry = await api('POST', '/keys', {
          key: sandbox.secret,
          body,
          headers: { 'idempotency-key': idempotencyKey },
          from,
        });
        expect(retry.status, JSON.stringify(retry.body)).toBe(201);
        expect(retry.headers.get('idempotent-replayed')).toBe('true');
        expect(retry.body.secret).toBe(made.body.secret);
        // A new Idempotency-Key is refused as before, until the day ends.
        const endOfDay = (Math.floor(productNow() / dayMs) + 1) * dayMs;
        const fresh = await expectRetryAfterUntil(endOfDay, () =>
          api('POST', '/keys', { key: sandbox.secret, body, headers: { 'idempotency-key': `${idempotencyKey}-new` }, from }),
        );
        expectError(fresh, 429, 'RATE_LIMITED');
        expect(fresh.body.error?.details).toMatchObject({ limit: 'test-key-requests-per-day' });
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
      await within('2032-01-06T08:00:00Z', dayMs, 30_000, async () => {
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
        // For the rest of that second the account's batches are refused before they are read (an
        // account could otherwise have over-large batches parsed and refused at any rate), a second's
        // wait. (The embedded form's clock is held, so the next request is in that second.)
        if (embedded()) {
          const atOnce = await api('POST', '/code/generate/batch', { key: tenant.key, body: batch('D', 20) });
          expectError(atOnce, 429, 'RATE_LIMITED');
          expect(atOnce.headers.get('retry-after')).toBe('1');
        }
        await nextSecond();
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

    it('refuses a batch of an account with nothing left before reading its body, and spends nothing', async () => {
      const tenant = await newTenant('free');
      // A GTIN of its own (another test's tenant owns `gtin`): its items are accepted, so its quota stays spent.
      const ownGtin = '09506000134390';
      const granted = await api('POST', `/accounts/${tenant.accountId}/gtins`, { key: operator, body: { gtin: ownGtin } });
      expect(granted.status, JSON.stringify(granted.body)).toBe(201);
      const batch = (prefix: string, size: number) => ({
        items: Array.from({ length: size }, (_, i) => ({ gtin: ownGtin, serialNumber: `${prefix}-${i}` })),
      });
      await within('2032-01-09T08:00:00Z', dayMs, 30_000, async (from) => {
        const all = await api('POST', '/code/generate/batch', { key: tenant.key, body: batch('A', 100), from });
        expect(all.status, JSON.stringify(all.body)).toBe(200);
        expect(all.headers.get('x-ratelimit-remaining')).toBe('0');
        // The gateway reads this one whole to count its item, and refuses it.
        const counted = await api('POST', '/code/generate/batch', { key: tenant.key, body: batch('B', 1), from });
        expectError(counted, 429, 'RATE_LIMITED');
        // A batch that says it is 8 MB, of which 64 KB are sent: the refusal comes before the rest.
        // (Before, the gateway waited for and parsed the whole body, then refused it.)
        const early = await answerBeforeBody(
          from,
          '/code/generate/batch',
          { 'x-api-key': tenant.key, 'idempotency-key': randomBytes(8).toString('hex') },
          { declaredBytes: 8_000_000, sentBytes: 64 * 1024, waitMs: 3_000 },
        );
        expect(early, 'no answer before the body was sent').toBeDefined();
        expect(early?.statusLine).toMatch(/^HTTP\/1\.1 429 /);
        expect(JSON.parse(early?.body ?? '{}').error).toMatchObject({
          code: 'RATE_LIMITED',
          details: { limit: 'generate-per-day' },
        });
        // Spent nothing: the account's usage shows the 100 codes generated, no more.
        const usage = await api('GET', '/usage', { key: tenant.key, from });
        expect(usage.status, JSON.stringify(usage.body)).toBe(200);
        expect(usage.body.quotas).toContainEqual({ name: 'generate', used: 100, limit: 100 });
        // The per-second burst is spent by the counted requests only: the early refusal spent none.
        expect(usage.body.quotas).toContainEqual({ name: 'requests', used: 2, limit: null });
      });
    });

    it('holds all of an account’s keys to one per-second burst', async () => {
      const { responses, otherStatus } = await inOneSecond(
        '2032-01-07T10:00:00.100Z',
        async () => {
          const tenant = await newTenant('free');
          const keys = [
            tenant.key,
            ...(await Promise.all([0, 1, 2].map((i) => newKey(tenant.key, { name: `burst ${i}`, scopes: ['keys:read'] })))).map(
              (k) => k.secret,
            ),
          ];
          return { keys, other: await newTenant('free') };
        },
        async ({ keys, other }) => {
          const responses = await Promise.all(
            Array.from({ length: 40 }, (_, i) => api('GET', '/keys?limit=1', { key: keys[i % 4] })),
          );
          return { responses, otherStatus: (await api('GET', '/keys?limit=1', { key: other.key })).status };
        },
      );
      expect(responses.filter((response) => response.status === 200)).toHaveLength(20);
      const refused = responses.filter((response) => response.status === 429);
      expect(refused).toHaveLength(20);
      expect(refused[0]?.body.error?.details).toMatchObject({ limit: 'requests-per-second' });
      expect(refused[0]?.headers.get('retry-after')).toBe('1');
      expect(otherStatus).toBe(200);
    });
  });

  describe('a key manages only keys within its own scopes', () => {
    it('holds an account to 100 active API keys an environment, taken one at a time; a revoked one frees its place', async () => {
      // Every key in use sits in each gateway's key cache, which all accounts share: a tenant
      // minting keys by the thousand would churn the other tenants' keys out of it.
      const { key: star } = await newTenant('enterprise');
      // Its first key is one; 98 more one by one, then two at once for the last place.
      const made: { id: string; secret: string }[] = [];
      for (let i = 0; i < 98; i++) made.push(await newKey(star, { name: `line ${i}`, scopes: ['keys:read'] }));
      const racing = await Promise.all(
        ['a', 'b'].map((name) => api('POST', '/keys', { key: star, body: { name: `racing ${name}`, scopes: ['keys:read'] } })),
      );
      expect(racing.map((r) => r.status).sort()).toEqual([201, 409]);
      const refused = racing.find((r) => r.status === 409) as ApiResponse;
      expectError(refused, 409, 'CONFLICT');
      expect(refused.body.error?.details).toEqual({ limit: 100 });
      // Nothing was stored of the refusal: the listing holds the 100.
      const listed = await api('GET', '/keys?type=api&limit=100', { key: star });
      expect(listed.body.keys.filter((k: Json) => k.status === 'active')).toHaveLength(100);
      expect(listed.body.pagination.hasMore).toBe(false);
      // Rotating needs a place too (the old key stays active through its grace period).
      expectError(await api('POST', `/keys/${made[0]?.id}/rotate`, { key: star, body: { graceSeconds: 3600 } }), 409, 'CONFLICT');
      // The test environment is another 100; a revoked key frees its place.
      await newKey(star, { name: 'sandbox', scopes: ['keys:read'], environment: 'test' });
      expect((await api('POST', `/keys/${made[0]?.id}/revoke`, { key: star })).status).toBe(200);
      await newKey(star, { name: 'after a revocation', scopes: ['keys:read'] });
      expectError(
        await api('POST', '/keys', { key: star, body: { name: 'one too many', scopes: ['keys:read'] } }),
        409,
        'CONFLICT',
      );
    });

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
      const expired = await newKey(owner, { name: 'expired', scopes: ['keys:read'], expiresIn: '1h' });
      // Expires long before the moment below (embedded); the distributed form, whose clock is the machine's, has it
      // expire an hour ago in its database, before it was ever used (so no gateway holds it in its key cache).
      await expireInDatabase(expired.id);
      // 20 failures at 09:00:10 (the embedded form's moment); the distributed form needs the same minute throughout.
      await within('2032-01-08T09:00:10Z', 60_000, 15_000, async (from) => {
        const bad = [revoked.secret, expired.secret, 'svc_live_nope', ...Array.from({ length: 17 }, unknownKey)];
        for (const key of bad) {
          const response = await api('GET', '/keys', { key, from });
          expect(response.status, JSON.stringify(response.body)).toBe(401);
        }
        const endOfMinute = (Math.floor(productNow() / 60_000) + 1) * 60_000;
        for (const key of [unknownKey(), revoked.secret, expired.secret, 'svc_test_x']) {
          // 50 s at 09:00:10.
          const refused = await expectRetryAfterUntil(endOfMinute, () => api('GET', '/keys', { key, from }));
          expectError(refused, 429, 'RATE_LIMITED');
          expect(refused.body.error?.details).toMatchObject({
            limit: 'failed-authentications-per-address',
            retryAfterSeconds: Number(refused.headers.get('retry-after')),
          });
        }
        // The public ping with a bad key is throttled too.
        expectError(await api('POST', '/system/ping/code-service', { key: unknownKey(), body: {}, from }), 429, 'RATE_LIMITED');
        // A valid key from the same address is served; a request without a key is told to send one.
        expect((await api('GET', '/keys', { key: owner, from })).status).toBe(200);
        expectError(await api('GET', '/keys', { from }), 401, 'MISSING_API_KEY');
      });
      // The next minute starts afresh. Embedded form only: the distributed one would wait up to a minute of real time
      // for it; the window is the rate limiter's own, the same code in both forms.
      if (embedded()) {
        await within('2032-01-08T09:01:00Z', 60_000, 15_000, async (from) => {
          expectError(await api('GET', '/keys', { key: unknownKey(), from }), 401, 'INVALID_API_KEY');
        });
      }
    });
  });

  describe('every public endpoint is limited per client address', () => {
    const publicRequests: Array<[string, (from: string) => Promise<AddressedResponse>]> = [
      ['the ping without a key', (from) => fetchFrom(from, `${product.url}/api/v1/system/ping/code-service`, { method: 'POST' })],
      [
        'a resolver page',
        (from) =>
          fetchFrom(from, `${product.url}/01/${gtin}/21/NOPE?sig=${'A'.repeat(86)}`, { headers: { accept: 'application/json' } }),
      ],
      [
        'the resolver’s report form',
        (from) =>
          fetchFrom(from, `${product.url}/resolver/report`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
            body: new URLSearchParams({ link: 'not a link', reason: 'x' }).toString(),
          }),
      ],
      ['the public auction verification', (from) => fetchFrom(from, `${product.url}/api/v1/auction/public/verify/NOPE-123`)],
    ];

    publicRequests.forEach(([name, request], index) => {
      it(`refuses the 11th request in a second to ${name} with 429 and Retry-After`, async () => {
        const { statuses, refused } = await inOneSecond(
          `2032-01-09T12:00:0${index}.100Z`,
          async () => undefined,
          async (_, from) => {
            const statuses: number[] = [];
            for (let i = 0; i < 10; i++) statuses.push((await request(from)).status);
            return { statuses, refused: await request(from) };
          },
        );
        expect(statuses.filter((status) => status === 429)).toEqual([]);
        expect(refused.status).toBe(429);
        expect(refused.headers.get('retry-after')).toBe('1');
        expect((JSON.parse(refused.text) as Json).error?.details).toMatchObject({ limit: 'requests-per-second-per-address' });
      });
    });

    it('counts a ping with a valid key against its account, not the address', async () => {
      const responses = await inOneSecond(
        '2032-01-09T12:00:30.100Z',
        async () => (await newTenant('starter')).key,
        async (key, from) => {
          const responses: ApiResponse[] = [];
          for (let i = 0; i < 15; i++) responses.push(await api('POST', '/system/ping/code-service', { key, body: {}, from }));
          return responses;
        },
      );
      for (const response of responses) {
        expect(response.status, JSON.stringify(response.body)).toBe(200);
        expect(response.headers.get('x-ratelimit-limit')).toBe('200');
      }
    });
  });
});
