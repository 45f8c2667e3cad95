import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';
import { waitFor } from '../support/wait.ts';

// What a leaked narrow key can reach beyond its scopes (found by a review of authentication, keys
// and limits, 2026-12-04). An `assets:create` key (a packaging line's) could give up the brand's
// operator-granted live GTINs, and every printed code stopped verifying until the operator granted
// them again; giving up a claim others made for the account now needs `*`. A `keys:*` key could
// subscribe a webhook endpoint of its own to the account's scans (GTIN, serial, where the shopper
// stood) and read them in the endpoint's messages, which `assets:read` guards everywhere else;
// asset events now need `assets:read` too. Over real HTTP, embedded form.

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let t: TestProduct;
let operator: string;
const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(t.url, method, `/api/v1${path}`, options);

/** A brand (enterprise) with a live operator grant of `prefix`, its `*` key and a narrower key of `scopes`. */
async function brand(name: string, prefix: string, scopes: string[]) {
  const created = await api('POST', '/accounts', { key: operator, body: { name, tier: 'enterprise' } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const star = created.body.apiKey.secret as string;
  const grant = await api('POST', `/accounts/${created.body.account.id}/gtins`, { key: operator, body: { prefix } });
  expect(grant.status, JSON.stringify(grant.body)).toBe(201);
  expect(grant.body).toMatchObject({ environment: 'live', source: 'granted', status: 'active' });
  const narrow = await api('POST', '/keys', { key: star, body: { name: `narrow ${scopes.join(' ')}`, scopes } });
  expect(narrow.status, JSON.stringify(narrow.body)).toBe(201);
  return { accountId: created.body.account.id as string, star, narrow: narrow.body.secret as string, claimId: grant.body.id };
}

beforeAll(async () => {
  // Webhook endpoints on loopback (a receiver of this test's own).
  t = await startTestProduct({ HALLMARK_WEBHOOKS_ALLOW_PRIVATE: 'true' });
  operator = t.product.generatedOperatorKey as string;
});

afterAll(async () => {
  await t?.stop();
});

describe('a leaked assets:create key (the packaging line’s key)', () => {
  it('cannot give up the brand’s operator-granted live GTINs, which voids every printed code until the operator grants them again', async () => {
    const { star, narrow: lineKey, claimId } = await brand('Printed brand', '9506000', ['assets:create']);
    const printed = await api('POST', '/code/generate', {
      key: lineKey,
      body: { gtin: '09506000134352', serialNumber: 'ON-THE-SHELF-1' },
    });
    expect(printed.status, JSON.stringify(printed.body)).toBe(201);
    const verdict = async () => (await api('POST', '/code/verify', { key: star, body: { url: printed.body.url } })).body;
    expect((await verdict()).verdict).toBe('AUTHENTIC');

    // The attack: one request with the narrowest key that writes anything. Removing what makes a
    // printed code verify needs `*` everywhere else (a signing key, a registered public key).
    const revoked = await api('POST', `/gtins/${claimId}/revoke`, { key: lineKey });
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(403);
    // Named as every INSUFFICIENT_SCOPE is (docs/API.md): what it needs, and what the key holds.
    expect(revoked.body.error).toMatchObject({
      code: 'INSUFFICIENT_SCOPE',
      details: { required: ['*'], granted: ['assets:create'] },
    });

    // The brand's printed codes still verify (on the reviewed code: 404 KEY_NOT_FOUND, no verdict),
    // and the brand cannot take its GTINs back itself (self-service claims are test-only).
    expect((await verdict()).verdict).toBe('AUTHENTIC');
    const listed = await api('GET', '/gtins', { key: star });
    expect(listed.body.claims.find((claim: Json) => claim.id === claimId)?.status).toBe('active');
  });
});

describe('blocks a leaked key made, found and removed by its owner', () => {
  it('lists the blocks of one key by createdBy, so the brand finds and removes what the leaked key withdrew', async () => {
    const { star, narrow: lineKey } = await brand('Withdrawn brand', '4006381', ['assets:create', 'assets:read']);
    const gtin = '04006381333931';
    const codes: Json[] = [];
    for (const serial of ['W-100', 'W-101', 'W-102']) {
      const made = await api('POST', '/code/generate', { key: star, body: { gtin, serialNumber: serial } });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      codes.push(made.body);
    }
    const verdicts = async () =>
      Promise.all(
        codes.map(async (code) => (await api('POST', '/code/verify', { key: star, body: { url: code.url } })).body.verdict),
      );
    // The brand's own block, and the leaked key's: a range over its genuine codes and one serial.
    const own = await api('POST', '/blocklist', { key: star, body: { gtin, serial: 'FAKE-1', kind: 'counterfeit' } });
    expect(own.status, JSON.stringify(own.body)).toBe(201);
    expect(own.body.createdBy).toBe((await api('GET', '/accounts/me', { key: star })).body.key.id);
    const leakedId = (await api('GET', '/accounts/me', { key: lineKey })).body.key.id as string;
    const range = await api('POST', '/blocklist', {
      key: lineKey,
      body: { gtin, serialFrom: 'W-100', serialTo: 'W-101', kind: 'counterfeit' },
    });
    const single = await api('POST', '/blocklist', { key: lineKey, body: { gtin, serial: 'W-102', kind: 'withdrawn' } });
    expect([range.status, single.status]).toEqual([201, 201]);
    expect(range.body.createdBy).toBe(leakedId);
    const verdictsAre = (expected: string[]) => async () =>
      JSON.stringify(await verdicts()) === JSON.stringify(expected) ? true : undefined;
    await waitFor('the leaked key’s blocks to change the verdicts', verdictsAre(['COUNTERFEIT', 'COUNTERFEIT', 'SUSPICIOUS']));

    // The owner revokes the key, lists what it made (and nothing else), and removes it.
    expect((await api('POST', `/keys/${leakedId}/revoke`, { key: star })).status).toBe(200);
    const made = await api('GET', `/blocklist?createdBy=${leakedId}&status=active`, { key: star });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    expect((made.body.blocks as Json[]).map((block) => block.blockId).sort()).toEqual(
      [range.body.blockId, single.body.blockId].sort(),
    );
    // Undone in one request, by a key holding * (an assets:create key, leaked too, may not mass-unblock).
    const otherLine = await api('POST', '/keys', { key: star, body: { name: 'another line', scopes: ['assets:create'] } });
    const narrowRemoval = await api('DELETE', `/blocklist?createdBy=${leakedId}`, { key: otherLine.body.secret });
    expect(narrowRemoval.status, JSON.stringify(narrowRemoval.body)).toBe(403);
    expect(narrowRemoval.body.error?.code).toBe('INSUFFICIENT_SCOPE');
    // Bad input is the envelope's 400, naming the field: no key named, or an empty one.
    for (const path of ['/blocklist', '/blocklist?createdBy=', `/blocklist?createdBy=${leakedId}&gtin=${gtin}`]) {
      const refused = await api('DELETE', path, { key: star });
      expect(refused.status, `${path}: ${JSON.stringify(refused.body)}`).toBe(400);
      expect(refused.body.error?.code).toBe('VALIDATION_ERROR');
    }
    const removal = await api('DELETE', `/blocklist?createdBy=${leakedId}`, { key: star });
    expect(removal.status, JSON.stringify(removal.body)).toBe(200);
    expect(removal.body).toEqual({ removed: 2, more: false });
    expect((await api('DELETE', `/blocklist?createdBy=${leakedId}`, { key: star })).body).toEqual({ removed: 0, more: false });
    const removedNow = await api('GET', `/blocklist?createdBy=${leakedId}&status=removed`, { key: star });
    expect((removedNow.body.blocks as Json[]).map((block) => block.status)).toEqual(['removed', 'removed']);
    await waitFor('the verdicts to come back', verdictsAre(['AUTHENTIC', 'AUTHENTIC', 'AUTHENTIC']));
    // The brand's own block stands, and is listed under its own key, not the leaked one.
    expect((await api('GET', `/blocklist?createdBy=${leakedId}&status=active`, { key: star })).body.blocks).toEqual([]);
    const starId = own.body.createdBy as string;
    expect((await api('GET', `/blocklist?createdBy=${starId}&status=active`, { key: star })).body.blocks).toMatchObject([
      { blockId: own.body.blockId, status: 'active' },
    ]);
  });
});

describe('links a leaked key made or pointed elsewhere, found by their owner', () => {
  it('lists the links one key made (createdBy) and changed last (changedBy), so the brand finds where its scans were sent', async () => {
    const { star, narrow: lineKey } = await brand('Linked brand', '5012345', ['assets:create', 'assets:read']);
    const gtin = '05012345678900';
    const starId = (await api('GET', '/accounts/me', { key: star })).body.key.id as string;
    const leakedId = (await api('GET', '/accounts/me', { key: lineKey })).body.key.id as string;
    const link = (key: string, href: string, linkType: string) =>
      api('POST', '/links', { key, body: { gtin, linkType, href, title: 'Product', type: 'text/html' } });
    const own = await link(star, 'https://brand.example/pip', 'gs1:pip');
    expect(own.status, JSON.stringify(own.body)).toBe(201);
    expect(own.body).toMatchObject({ createdBy: starId, changedBy: null });
    // The leaked key adds a link of its own, and points the brand's at a site of its own.
    const added = await link(lineKey, 'https://phish.example/login', 'gs1:support');
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    const redirected = await api('PATCH', `/links/${own.body.id}`, { key: lineKey, body: { href: 'https://phish.example/pip' } });
    expect(redirected.status, JSON.stringify(redirected.body)).toBe(200);
    expect(redirected.body).toMatchObject({ createdBy: starId, changedBy: leakedId });

    const ids = async (query: string) =>
      ((await api('GET', `/links?${query}`, { key: star })).body.links as Json[]).map((each) => each.id as string).sort();
    expect(await ids(`createdBy=${leakedId}`)).toEqual([added.body.id]);
    expect(await ids(`changedBy=${leakedId}`)).toEqual([own.body.id]);
    expect(await ids(`createdBy=${starId}`)).toEqual([own.body.id]);
    // Put right by the brand's own key: the change is its own now.
    expect((await api('DELETE', `/links/${added.body.id}`, { key: star })).status).toBe(204);
    const restored = await api('PATCH', `/links/${own.body.id}`, { key: star, body: { href: 'https://brand.example/pip' } });
    expect(restored.body).toMatchObject({ changedBy: starId, href: 'https://brand.example/pip' });
    expect(await ids(`changedBy=${leakedId}`)).toEqual([]);
  });

  it('removes every link a leaked key made in one request (scope *), in chunks, and leaves the brand’s own', async () => {
    const { accountId, star, narrow: lineKey } = await brand('Relinked brand', '5012346', ['assets:create', 'assets:read']);
    const gtin = '05012346000007';
    const leakedId = (await api('GET', '/accounts/me', { key: lineKey })).body.key.id as string;
    const link = (key: string, body: Json) =>
      api('POST', '/links', { key, body: { gtin, linkType: 'gs1:pip', title: 'Product', type: 'text/html', ...body } });
    const own = await link(star, { href: 'https://brand.example/pip', default: true });
    expect(own.status, JSON.stringify(own.body)).toBe(201);
    // The leaked key adds links by the hundred (more than one removal chunk of 500), one per serial,
    // each sending that item's scans to its own site.
    const made = 520;
    for (let first = 0; first < made; first += 40) {
      const added = await Promise.all(
        Array.from({ length: Math.min(40, made - first) }, (_, i) =>
          link(lineKey, { serial: `S${first + i}`, href: `https://phish.example/${first + i}`, default: true }),
        ),
      );
      for (const each of added) expect(each.status, JSON.stringify(each.body)).toBe(201);
    }
    const resolved = await fetch(`${t.url}/01/${gtin}/21/S7`, { redirect: 'manual' });
    expect(resolved.headers.get('location')).toBe('https://phish.example/7');

    // Another narrow key of the brand (leaked as well, say) may not mass-remove; bad input is 400.
    const narrowRemoval = await api('DELETE', `/links?createdBy=${leakedId}`, { key: lineKey });
    expect(narrowRemoval.status).toBe(403);
    expect(narrowRemoval.body.error?.code).toBe('INSUFFICIENT_SCOPE');
    for (const path of ['/links', '/links?createdBy=', `/links?createdBy=${leakedId}&gtin=${gtin}`]) {
      const refused = await api('DELETE', path, { key: star });
      expect(refused.status, path).toBe(400);
      expect(refused.body.error?.code, path).toBe('VALIDATION_ERROR');
    }
    // Another account's key removes nothing of this brand's.
    const stranger = await brand('Stranger brand', '5012347', ['assets:read']);
    expect((await api('DELETE', `/links?createdBy=${leakedId}`, { key: stranger.star })).body).toEqual({
      removed: 0,
      more: false,
    });

    const removal = await api('DELETE', `/links?createdBy=${leakedId}`, { key: star });
    expect(removal.status, JSON.stringify(removal.body)).toBe(200);
    expect(removal.body).toEqual({ removed: made, more: false });
    expect((await api('DELETE', `/links?createdBy=${leakedId}`, { key: star })).body).toEqual({ removed: 0, more: false });
    const left = await api('GET', `/links?gtin=${gtin}&limit=100`, { key: star });
    expect((left.body.links as Json[]).map((each) => each.id)).toEqual([own.body.id]);
    // The resolver sends the item's scans to the brand's page again, at once.
    const restored = await fetch(`${t.url}/01/${gtin}/21/S7`, { redirect: 'manual' });
    expect(restored.headers.get('location')).toBe('https://brand.example/pip');
    // Each removal is in the account's stream, by the key that removed it.
    const starId = own.body.createdBy as string;
    const removals = await t.product.db.query<{ by: string; made: string }>(
      `SELECT data->>'deletedBy' AS by, data->>'createdBy' AS made FROM event_log
       WHERE stream_id = $1 AND event_type = 'link.deleted'`,
      [`account-${accountId}-live`],
    );
    expect(removals).toHaveLength(made);
    expect(new Set(removals.map((each) => `${each.by} ${each.made}`))).toEqual(new Set([`${starId} ${leakedId}`]));
  });
});

describe('a leaked keys:write / keys:read key', () => {
  let receiver: Server;
  const received: Json[] = [];

  beforeAll(async () => {
    receiver = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => {
        body += chunk;
      });
      request.on('end', () => {
        try {
          received.push({ path: request.url, body: JSON.parse(body) });
        } catch {
          // not JSON: nothing to keep
        }
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    await new Promise((resolve) => receiver?.close(resolve));
  });

  it('gets no scan data (GTIN, serial, shopper location) that assets:read guards, through a webhook endpoint or its messages', async () => {
    const { star, narrow: keyManager } = await brand('Watched brand', '9506001', ['keys:write', 'keys:read']);
    // What the key may read itself: no scans.
    const scans = await api('GET', '/scans', { key: keyManager });
    expect(scans.status).toBe(403);
    expect(scans.body.error?.details?.required).toBe('assets:read');

    // The attack: an endpoint of the attacker's, subscribed to the account's scans.
    const port = (receiver.address() as AddressInfo).port;
    const refused = await api('POST', '/webhooks/endpoints', {
      key: keyManager,
      body: { url: `http://127.0.0.1:${port}/hook`, eventTypes: ['scan.counterfeit', 'scan.suspicious'] },
    });
    expect(refused.status, JSON.stringify(refused.body)).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'INSUFFICIENT_SCOPE', details: { required: 'assets:read' } });
    // Events that carry no asset data are still the key manager's to subscribe.
    const quota = await api('POST', '/webhooks/endpoints', {
      key: keyManager,
      body: { url: `http://127.0.0.1:${port}/quota`, eventTypes: ['quota.threshold', 'key.expiring'] },
    });
    expect(quota.status, JSON.stringify(quota.body)).toBe(201);
    // Nor may it read, or redirect, the brand's own endpoint of scans.
    const brands = await api('POST', '/webhooks/endpoints', {
      key: star,
      body: { url: `http://127.0.0.1:${port}/brand`, eventTypes: ['scan.counterfeit'] },
    });
    expect(brands.status, JSON.stringify(brands.body)).toBe(201);
    const redirected = await api('PATCH', `/webhooks/endpoints/${brands.body.id}`, {
      key: keyManager,
      body: { url: `http://127.0.0.1:${port}/hook` },
    });
    expect(redirected.status, JSON.stringify(redirected.body)).toBe(403);
    // Nor a secret of its own for it (it would sign made-up scan.counterfeit messages the brand's
    // receiver takes for the service's), nor silence it: rotate-secret answered 200 with the new
    // secret, and disable and delete went through (a review of 2026-12-05).
    for (const [method, path] of [
      ['POST', 'rotate-secret'],
      ['POST', 'disable'],
      ['DELETE', ''],
    ] as const) {
      const refused = await api(method, `/webhooks/endpoints/${brands.body.id}${path ? `/${path}` : ''}`, { key: keyManager });
      expect([method, path, refused.status, refused.body.error?.code, refused.body.secret]).toEqual([
        method,
        path,
        403,
        'INSUFFICIENT_SCOPE',
        undefined,
      ]);
    }

    // A shopper's scan of a forged label of the brand, with where the shopper stood.
    const code = await api('POST', '/code/generate', {
      key: star,
      body: { gtin: '09506001343524', serialNumber: 'SECRET-SERIAL-7' },
    });
    expect(code.status, JSON.stringify(code.body)).toBe(201);
    const forged = (code.body.url as string).replace(/sig=[A-Za-z0-9_-]{6}/, 'sig=AAAAAA');
    const scan = await api('POST', '/code/verify', {
      key: star,
      body: { url: forged, location: { latitude: 48.8566, longitude: 2.3522 } },
    });
    expect(scan.body.verdict).toBe('COUNTERFEIT');
    // The brand's endpoint has the message (as its owner sees); the key manager may not list it.
    const owned = await waitFor('the scan’s message on the brand’s endpoint', async () => {
      const messages = await api('GET', `/webhooks/endpoints/${brands.body.id}/messages`, { key: star });
      return messages.body.messages?.some((message: Json) => message.payload?.data?.serial === 'SECRET-SERIAL-7')
        ? messages.body.messages
        : undefined;
    });
    expect(owned.length).toBeGreaterThan(0);
    const listed = await api('GET', `/webhooks/endpoints/${brands.body.id}/messages`, { key: keyManager });
    expect(listed.status, JSON.stringify(listed.body)).toBe(403);
    const attempts = await api('GET', `/webhooks/endpoints/${brands.body.id}/messages/${owned[0].id}/attempts`, {
      key: keyManager,
    });
    expect(attempts.status, JSON.stringify(attempts.body)).toBe(403);
    // Nor replay them: a replay answered the message, serial and place and all (a review of 2026-12-05).
    const replayed = await api('POST', `/webhooks/endpoints/${brands.body.id}/messages/${owned[0].id}/replay`, {
      key: keyManager,
    });
    expect([replayed.status, replayed.body.error?.code, replayed.body.payload]).toEqual([403, 'INSUFFICIENT_SCOPE', undefined]);
    const replayedFailed = await api('POST', `/webhooks/endpoints/${brands.body.id}/replay`, {
      key: keyManager,
      body: { since: '2020-01-01T00:00:00Z' },
    });
    expect([replayedFailed.status, replayedFailed.body.error?.code]).toEqual([403, 'INSUFFICIENT_SCOPE']);
    // Only the brand's own URL got the scan.
    const delivered = received.filter((message) => message.body?.data?.serial === 'SECRET-SERIAL-7');
    expect(delivered.map((message) => message.path)).not.toContain('/hook');

    // The brand narrows its endpoint to events without asset data. It still holds the scan's message:
    // the key manager listed it (serial, place and all), read its attempts, pointed the endpoint at
    // its own URL and replayed the message there, all 200 (an audit over HTTP, 2026-12-07).
    const narrowed = await api('PATCH', `/webhooks/endpoints/${brands.body.id}`, {
      key: star,
      body: { eventTypes: ['quota.threshold'] },
    });
    expect(narrowed.status, JSON.stringify(narrowed.body)).toBe(200);
    for (const [method, path, body] of [
      ['GET', 'messages', undefined],
      ['GET', `messages/${owned[0].id}/attempts`, undefined],
      ['POST', `messages/${owned[0].id}/replay`, undefined],
      ['POST', 'replay', { since: '2020-01-01T00:00:00Z' }],
      ['PATCH', '', { url: `http://127.0.0.1:${port}/hook` }],
      ['POST', 'rotate-secret', undefined],
      ['POST', 'disable', undefined],
      ['DELETE', '', undefined],
    ] as const) {
      const refused = await api(method, `/webhooks/endpoints/${brands.body.id}${path ? `/${path}` : ''}`, {
        key: keyManager,
        ...(body ? { body } : {}),
      });
      expect([method, path, refused.status, refused.body.error?.code, refused.body.messages]).toEqual([
        method,
        path,
        403,
        'INSUFFICIENT_SCOPE',
        undefined,
      ]);
      expect(refused.body.error?.details?.eventTypes).toEqual(['scan.counterfeit']);
    }
    // The brand's own key still manages it, and an endpoint that never held asset messages stays the key manager's.
    expect((await api('GET', `/webhooks/endpoints/${brands.body.id}/messages`, { key: star })).status).toBe(200);
    expect((await api('GET', `/webhooks/endpoints/${quota.body.id}/messages`, { key: keyManager })).status).toBe(200);
  });
});
