// The key stop markers (from a review of 2026-12-05): a key revoked, or rotated with no grace,
// through one gateway must be refused by every gateway from the answer on, whatever it acts as (a
// live key's console session switched to test) and however late its body comes. Three gateways; the
// third reaches NATS through a relay whose traffic a test holds (its broadcasts late), as
// revocation-replicas does. Each probe is sent right after the revocation's answer, well inside the
// 500 ms cache-epoch poll.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DistributedProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { call } from '../support/embedded.ts';
import { type SilentLink, startSilentLink } from '../support/silent-link.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

const natsUrl = process.env.HALLMARK_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const cookieHeaders = (token: string) => ({ cookie: `hallmark_session=${token}`, 'x-hallmark-console': '1' });

describe('API key stop markers across gateways (distributed form)', () => {
  let product: DistributedProduct;
  let one: string;
  let two: string;
  let three: string;
  let lateBus: SilentLink;
  let brand: { id: string; key: string };
  let other: { id: string; key: string };
  const at = (base: string, method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
    call<Json>(base, method, `/api/v1${path}`, options);
  const newAccount = async (name: string) => {
    const created = await at(one, 'POST', '/accounts', { key: product.operatorKey, body: { name, tier: 'enterprise' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return { id: created.body.account.id as string, key: created.body.apiKey.secret as string };
  };
  const newKey = async (name: string, scopes: string[] = ['*']) => {
    const made = await at(one, 'POST', '/keys', { key: brand.key, body: { name, scopes } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    return { id: made.body.id as string, secret: made.body.secret as string };
  };
  const meWith = async (base: string, options: Parameters<typeof call>[3]) => {
    const answer = await at(base, 'GET', '/accounts/me', options);
    return `${answer.status} ${answer.body.error?.code ?? ''}`.trim();
  };

  beforeAll(async () => {
    lateBus = await startSilentLink({ host: '127.0.0.1', port: Number(new URL(natsUrl).port || 4222) });
    product = await startDistributedProduct(
      { HALLMARK_PUBLIC_RATE_LIMIT: '100000', HALLMARK_AUTH_FAILURES_PER_MINUTE: '100000' },
      { gatewayEnv: [{}, {}, { HALLMARK_NATS_URL: `nats://127.0.0.1:${lateBus.port}` }] },
    );
    [one, two, three] = product.gatewayUrls as [string, string, string];
    brand = await newAccount('Review brand');
    other = await newAccount('Review other tenant');
  }, 120_000);

  afterAll(async () => {
    lateBus?.release();
    await product?.stop();
    await lateBus?.close();
  });

  // The marker was set only under the revoking principal's environment ({acc:live}); a console
  // session of a live key switched to test acts as the key in test, so its spends read the
  // {acc:test} marker, which nobody set: a gateway that had not heard the broadcast served it.
  // Markers are now set in both environments.
  it('a live key’s console session switched to test is refused at once on every gateway once the key is revoked', async () => {
    const late: string[] = [];
    for (let round = 0; round < 5; round++) {
      const leaked = await newKey(`session key ${round}`);
      const signedIn = await call<Json>(one, 'POST', '/api/v1/sessions', { body: { apiKey: leaked.secret } });
      expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(201);
      const token = /hallmark_session=([0-9a-f]{64});/.exec(signedIn.headers.get('set-cookie') ?? '')?.[1] as string;
      const switched = await at(one, 'PATCH', '/sessions/current', {
        headers: cookieHeaders(token),
        body: { environment: 'test' },
      });
      expect(switched.status, JSON.stringify(switched.body)).toBe(200);
      // Gateways two and three have the key cached.
      expect([
        await meWith(two, { headers: cookieHeaders(token) }),
        await meWith(three, { headers: cookieHeaders(token) }),
      ]).toEqual(['200', '200']);
      lateBus.hold();
      try {
        expect((await at(one, 'POST', `/keys/${leaked.id}/revoke`, { key: brand.key })).status).toBe(200);
        const after = await meWith(three, { headers: cookieHeaders(token) });
        if (after !== '401 REVOKED_API_KEY') late.push(`round ${round}: gateway three answered ${after}`);
      } finally {
        lateBus.release();
      }
    }
    expect(late).toEqual([]);
  }, 60_000);

  // Guard (held): the same with the session left in the key's own environment.
  it('a session in the key’s own environment is refused at once on a gateway that has not heard', async () => {
    const leaked = await newKey('session key live');
    const signedIn = await call<Json>(one, 'POST', '/api/v1/sessions', { body: { apiKey: leaked.secret } });
    const token = /hallmark_session=([0-9a-f]{64});/.exec(signedIn.headers.get('set-cookie') ?? '')?.[1] as string;
    expect(await meWith(three, { headers: cookieHeaders(token) })).toBe('200');
    lateBus.hold();
    try {
      expect((await at(one, 'POST', `/keys/${leaked.id}/revoke`, { key: brand.key })).status).toBe(200);
      expect(await meWith(three, { headers: cookieHeaders(token) })).toBe('401 REVOKED_API_KEY');
    } finally {
      lateBus.release();
    }
  }, 30_000);

  // A request that spends at once (no per-item quota, no Idempotency-Key) spends in onRequest,
  // before its body is read, and preValidation checked the key again only in the gateway's own
  // cache: with its body held across the revocation through gateway one, gateway three (not having
  // heard) changed the account's branding with the revoked key, every round. (POST /keys held: its
  // write locks the acting key in the database.) A body read late now reads the markers again.
  it('a PUT /account/branding whose body arrives after the key was revoked through another gateway is refused', async () => {
    const late: string[] = [];
    const rounds = 4;
    for (let round = 0; round < rounds; round++) {
      // Gateway three has seen the api_keys cache epoch of the last round's revocation (polled every
      // 500 ms) before it caches this round's key: else that epoch, seen later, sent the look-up to
      // the database, which found the key revoked whatever the markers.
      await sleep(1_100);
      const leaked = await newKey(`held body ${round}`);
      expect(await meWith(three, { key: leaked.secret })).toBe('200');
      const body = JSON.stringify({ displayName: `Changed after revocation ${round}` });
      const url = new URL(`${three}/api/v1/account/branding`);
      let sendRest!: () => void;
      const answered = new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = httpRequest(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: 'PUT',
            agent: false,
            headers: {
              'x-api-key': leaked.secret,
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
            },
          },
          (res) => {
            let text = '';
            res.on('data', (chunk) => {
              text += chunk;
            });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
          },
        );
        req.on('error', reject);
        req.write(body.slice(0, 10));
        sendRest = () => req.end(body.slice(10));
      });
      // Authenticated and spent on gateway three (onRequest), body not complete yet.
      await sleep(300);
      lateBus.hold();
      try {
        expect((await at(one, 'POST', `/keys/${leaked.id}/revoke`, { key: brand.key })).status).toBe(200);
        sendRest();
        // Past preValidation before the held broadcast is let through.
        await sleep(150);
      } finally {
        lateBus.release();
      }
      const answer = await answered;
      if (answer.status !== 401) late.push(`round ${round}: ${answer.status} ${answer.text.slice(0, 80)}`);
    }
    expect(late, `${late.length} of ${rounds} rounds served`).toEqual([]);
  }, 60_000);

  // Guards (held): the marker's refusals are 401 with the right code, spend nothing, and hit no other key.
  const requestsUsed = (usage: Json) => (usage.quotas as Json[]).find((quota) => quota.name === 'requests')?.used as number;
  it('40 requests at once with a revoked key on a gateway that has not heard: 401 REVOKED_API_KEY, no X-RateLimit headers, nothing spent', async () => {
    const leaked = await newKey('burst key');
    const usageBefore = (await at(one, 'GET', '/usage', { key: brand.key })).body;
    expect(await meWith(three, { key: leaked.secret })).toBe('200');
    lateBus.hold();
    let answers: Array<{ status: number; code: string | undefined; limitHeader: string | null }> = [];
    try {
      expect((await at(one, 'POST', `/keys/${leaked.id}/revoke`, { key: brand.key })).status).toBe(200);
      answers = await Promise.all(
        Array.from({ length: 40 }, async () => {
          const answer = await at(three, 'GET', '/accounts/me', { key: leaked.secret });
          return { status: answer.status, code: answer.body.error?.code, limitHeader: answer.headers.get('x-ratelimit-limit') };
        }),
      );
    } finally {
      lateBus.release();
    }
    for (const answer of answers) expect(answer).toEqual({ status: 401, code: 'REVOKED_API_KEY', limitHeader: null });
    const usageAfter = (await at(one, 'GET', '/usage', { key: brand.key })).body;
    // Only the three /usage-and-me requests of the brand's and leaked key's own before the revocation counted.
    expect(requestsUsed(usageAfter)).toBeLessThanOrEqual(requestsUsed(usageBefore) + 3);
  }, 30_000);

  it('another tenant cannot revoke or rotate our key (404, no marker); a second revocation answers the first revokedAt; the account’s other keys go on', async () => {
    const target = await newKey('target');
    const foreignRevoke = await at(one, 'POST', `/keys/${target.id}/revoke`, { key: other.key });
    expect(foreignRevoke.status).toBe(404);
    const foreignRotate = await at(one, 'POST', `/keys/${target.id}/rotate`, { key: other.key, body: { graceSeconds: 0 } });
    expect(foreignRotate.status).toBe(404);
    for (const base of [one, two, three]) expect(await meWith(base, { key: target.secret })).toBe('200');
    const first = await at(two, 'POST', `/keys/${target.id}/revoke`, { key: brand.key });
    const second = await at(three, 'POST', `/keys/${target.id}/revoke`, { key: brand.key });
    expect(second.status).toBe(200);
    expect(second.body.revokedAt).toBe(first.body.revokedAt);
    for (const base of [one, two, three]) {
      expect(await meWith(base, { key: target.secret })).toBe('401 REVOKED_API_KEY');
      expect(await meWith(base, { key: brand.key })).toBe('200');
    }
  }, 30_000);

  it('an Idempotency-Key replay with a revoked key on a gateway that has not heard is 401', async () => {
    const leaked = await newKey('replay key');
    const idem = { 'idempotency-key': `review-${Date.now()}` };
    const made = await at(three, 'POST', '/keys', {
      key: leaked.secret,
      headers: idem,
      body: { name: 'child', scopes: ['assets:read'] },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    lateBus.hold();
    try {
      expect((await at(one, 'POST', `/keys/${leaked.id}/revoke`, { key: brand.key })).status).toBe(200);
      const replay = await at(three, 'POST', '/keys', {
        key: leaked.secret,
        headers: idem,
        body: { name: 'child', scopes: ['assets:read'] },
      });
      expect(`${replay.status} ${replay.body.error?.code}`).toBe('401 REVOKED_API_KEY');
    } finally {
      lateBus.release();
    }
  }, 30_000);
});
