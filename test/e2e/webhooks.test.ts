// Issue #21, items 3-5: Standard Webhooks over real HTTP in the distributed form. Endpoints by API,
// a suspicious scan at a loopback receiver within 1 s, both signatures checked (v1 by the
// unmodified standardwebhooks package, v1a under the key /.well-known/jwks.json publishes), the
// attempts listed, and a delivery worker killed mid-delivery whose message is still delivered once.
// Retries and refusals in detail: services/compliance-service/src/webhooks/*.test.ts.
import { createPublicKey, verify as verifySignature } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createTcpServer, type Socket } from 'node:net';
import { setEventStreamRefusing } from '@hallmark/bus';
import { maxWebhookEndpoints } from '@hallmark/contracts';
import { createPostgresDatabase } from '@hallmark/sql';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DistributedProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { call, startEmbeddedProduct } from '../support/embedded.ts';
import { waitFor } from '../support/wait.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

interface Delivery {
  headers: IncomingMessage['headers'];
  body: string;
  at: number;
}

let product: DistributedProduct;
let key: string;
let gtin: string;
let url: string;
const received: Delivery[] = [];
/** How the receiver answers the next request; the default acknowledges. */
let answer: (delivery: Delivery, response: ServerResponse) => void = (_delivery, response) => response.writeHead(204).end();
const receiver = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const delivery = { headers: request.headers, body: Buffer.concat(chunks).toString(), at: Date.now() };
    received.push(delivery);
    answer(delivery, response);
  });
});

const api = (method: string, path: string, body?: unknown) => call<Json>(product.url, method, `/api/v1${path}`, { key, body });
function ok(response: { status: number; body: Json }, status = 200) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  return response.body;
}
const ofType = (type: string) => received.filter((delivery) => JSON.parse(delivery.body).type === type);

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  product = await startDistributedProduct({
    HALLMARK_WEBHOOKS_ALLOW_PRIVATE: 'true',
    HALLMARK_WEBHOOK_RETRY_SCHEDULE_MS: '100,100,100',
    HALLMARK_WEBHOOK_TIMEOUT_MS: '1000',
    HALLMARK_WEBHOOK_LEASE_MS: '1500',
    HALLMARK_WEBHOOK_POLL_MS: '50',
  });
  const created = ok(
    await call<Json>(product.url, 'POST', '/api/v1/accounts', {
      key: product.operatorKey,
      body: { name: 'Hooks', tier: 'enterprise' },
    }),
    201,
  );
  key = created.apiKey.secret;
  gtin = '09506000134352';
  ok(
    await call<Json>(product.url, 'POST', `/api/v1/accounts/${created.account.id}/gtins`, {
      key: product.operatorKey,
      body: { gtin },
    }),
    201,
  );
}, 120_000);

afterAll(async () => {
  receiver.closeAllConnections();
  receiver.close();
  await product?.stop();
});

describe('webhooks (distributed)', () => {
  let endpoint: Json;

  it('manages endpoints by API: the secret once, http(s) only, scoped to the account', async () => {
    endpoint = ok(
      await api('POST', '/webhooks/endpoints', {
        url,
        eventTypes: ['scan.suspicious', 'code.blocked', 'test'],
        description: 'SOC',
      }),
      201,
    );
    expect(endpoint.secret).toMatch(/^whsec_/);
    const fetched = ok(await api('GET', `/webhooks/endpoints/${endpoint.id}`));
    expect(fetched).toMatchObject({ id: endpoint.id, url, status: 'enabled', description: 'SOC' });
    expect(JSON.stringify(fetched)).not.toContain(endpoint.secret);
    expect(ok(await api('GET', '/webhooks/endpoints')).endpoints.map((each: Json) => each.id)).toEqual([endpoint.id]);
    for (const refused of ['ftp://example.com/x', 'http:///x']) {
      const bad = await api('POST', '/webhooks/endpoints', { url: refused, eventTypes: ['test'] });
      expect([bad.status, bad.body.error?.code], refused).toEqual([400, 'VALIDATION_ERROR']);
      const badPatch = await api('PATCH', `/webhooks/endpoints/${endpoint.id}`, { url: refused });
      expect([badPatch.status, badPatch.body.error?.code], refused).toEqual([400, 'VALIDATION_ERROR']);
    }
    const unknown = await api('POST', '/webhooks/endpoints', { url, eventTypes: ['nope'] });
    expect(unknown.status).toBe(400);
    const other = await api('GET', '/webhooks/endpoints/whep_none');
    expect([other.status, other.body.error?.code]).toEqual([404, 'NOT_FOUND']);
    const patched = ok(await api('PATCH', `/webhooks/endpoints/${endpoint.id}`, { description: 'Security team' }));
    expect(patched.description).toBe('Security team');
  });

  it('sends a test message on demand, signed v1 (standardwebhooks) and v1a (the JWKS key)', async () => {
    const queued = ok(await api('POST', `/webhooks/endpoints/${endpoint.id}/test`), 202);
    const delivery = await waitFor(
      'the test message',
      async () => received.find((each) => each.headers['webhook-id'] === queued.id),
      {
        timeoutMs: 5_000,
        intervalMs: 10,
      },
    );
    expect(new Webhook(endpoint.secret).verify(delivery.body, delivery.headers as Record<string, string>)).toMatchObject({
      type: 'test',
      data: { endpointId: endpoint.id },
    });
    const jwks = (await (await fetch(`${product.url}/.well-known/jwks.json`)).json()) as { keys: Json[] };
    const jwk = jwks.keys.find((each) => each.kid === delivery.headers['webhook-key-id']);
    expect(jwk).toBeDefined();
    const v1a = String(delivery.headers['webhook-signature'])
      .split(' ')
      .find((part) => part.startsWith('v1a,')) as string;
    const content = Buffer.from(`${delivery.headers['webhook-id']}.${delivery.headers['webhook-timestamp']}.${delivery.body}`);
    const publicKey = createPublicKey({ key: { kty: jwk?.kty, crv: jwk?.crv, x: jwk?.x }, format: 'jwk' });
    expect(verifySignature(null, content, publicKey, Buffer.from(v1a.slice(4), 'base64'))).toBe(true);
    const attempts = await waitFor(
      'its attempt listed',
      async () => {
        const listed = ok(await api('GET', `/webhooks/endpoints/${endpoint.id}/messages/${queued.id}/attempts`));
        return listed.attempts.length > 0 ? listed.attempts : undefined;
      },
      { timeoutMs: 5_000 },
    );
    expect(attempts[0]).toMatchObject({ status: 'succeeded', responseCode: 204 });
  });

  it('replays the failed messages of a time range over HTTP: one that failed every attempt is delivered again, same webhook-id', async () => {
    // A receiver of its own that fails until told otherwise.
    let failing = true;
    const ids: string[] = [];
    const flaky = createServer((request, response) => {
      ids.push(String(request.headers['webhook-id']));
      request.resume();
      request.on('end', () => response.writeHead(failing ? 500 : 204).end());
    });
    await new Promise<void>((resolve) => flaky.listen(0, '127.0.0.1', resolve));
    try {
      const flakyUrl = `http://127.0.0.1:${(flaky.address() as AddressInfo).port}/flaky`;
      const target = ok(await api('POST', '/webhooks/endpoints', { url: flakyUrl, eventTypes: ['scan.suspicious'] }), 201);
      const queued = ok(await api('POST', `/webhooks/endpoints/${target.id}/test`), 202);
      // The schedule of this product is 100 ms three times: four attempts, then failed.
      await waitFor(
        'the message failed',
        async () => {
          const listed = ok(await api('GET', `/webhooks/endpoints/${target.id}/messages?status=failed`));
          return listed.messages.some((message: Json) => message.id === queued.id) || undefined;
        },
        { timeoutMs: 10_000 },
      );
      expect(ids.filter((id) => id === queued.id)).toHaveLength(4);

      // A range that holds it not, and times that are not RFC 3339, replay nothing.
      const later = new Date(Date.now() + 60_000).toISOString();
      expect(ok(await api('POST', `/webhooks/endpoints/${target.id}/replay`, { since: later }), 202)).toEqual({ replayed: 0 });
      for (const since of ['yesterday', '2026-02-30T00:00:00Z', '2026-11-28T12:00:00']) {
        const refused = await api('POST', `/webhooks/endpoints/${target.id}/replay`, { since });
        expect(refused.status, since).toBe(400);
        expect(refused.body.error?.code).toBe('VALIDATION_ERROR');
      }
      // Another account cannot replay this endpoint's messages.
      const other = ok(
        await call<Json>(product.url, 'POST', '/api/v1/accounts', {
          key: product.operatorKey,
          body: { name: 'Hooks, another', tier: 'enterprise' },
        }),
        201,
      );
      const foreign = await call<Json>(product.url, 'POST', `/api/v1/webhooks/endpoints/${target.id}/replay`, {
        key: other.apiKey.secret,
        body: { since: new Date(Date.now() - 60_000).toISOString() },
      });
      expect(foreign.status).toBe(404);

      failing = false;
      const since = new Date(Date.now() - 60_000).toISOString();
      expect(ok(await api('POST', `/webhooks/endpoints/${target.id}/replay`, { since }), 202)).toEqual({ replayed: 1 });
      const attempts = await waitFor(
        'the replayed delivery',
        async () => {
          const listed = ok(await api('GET', `/webhooks/endpoints/${target.id}/messages/${queued.id}/attempts`));
          return listed.attempts.some((attempt: Json) => attempt.status === 'succeeded') ? listed.attempts : undefined;
        },
        { timeoutMs: 5_000 },
      );
      expect(attempts.filter((attempt: Json) => attempt.status === 'failed')).toHaveLength(4);
      expect(ids.filter((id) => id === queued.id)).toHaveLength(5);
      // Paged, oldest first: replays add attempts without end, so no answer holds them all.
      const paged: Json[] = [];
      let cursor: string | null = null;
      do {
        const page: Json = ok(
          await api(
            'GET',
            `/webhooks/endpoints/${target.id}/messages/${queued.id}/attempts?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
          ),
        );
        expect(page.attempts.length).toBeLessThanOrEqual(2);
        paged.push(...page.attempts);
        cursor = page.pagination.nextCursor;
      } while (cursor);
      expect(paged.map((attempt) => attempt.id)).toEqual(attempts.map((attempt: Json) => attempt.id));
      expect(paged.at(-1)?.status).toBe('succeeded');
      const tooMany = await api('GET', `/webhooks/endpoints/${target.id}/messages/${queued.id}/attempts?limit=1000`);
      expect([tooMany.status, tooMany.body.error?.code]).toEqual([400, 'VALIDATION_ERROR']);
      // Delivered now: replaying the range again finds nothing failed.
      expect(ok(await api('POST', `/webhooks/endpoints/${target.id}/replay`, { since }), 202)).toEqual({ replayed: 0 });
    } finally {
      flaky.closeAllConnections();
      flaky.close();
    }
  });

  it('delivers a suspicious scan within 1 s of the verification’s answer, and the block that caused it', async () => {
    const code = ok(await api('POST', '/code/generate', { gtin, serialNumber: 'WH-1', batchNumber: 'L1' }), 201);
    ok(await api('POST', '/blocklist', { gtin, serial: 'WH-1', kind: 'withdrawn', reason: 'recalled' }), 201);
    const verified = ok(await api('POST', '/code/verify', { url: code.url }));
    const answeredAt = Date.now();
    expect(verified.verdict).toBe('SUSPICIOUS');
    const delivery = await waitFor('scan.suspicious', async () => ofType('scan.suspicious')[0], {
      timeoutMs: 5_000,
      intervalMs: 10,
    });
    expect(delivery.at - answeredAt).toBeLessThan(1_000);
    expect(JSON.parse(delivery.body).data).toMatchObject({ gtin, serial: 'WH-1', verdict: 'SUSPICIOUS' });
    const blocked = await waitFor('code.blocked', async () => ofType('code.blocked')[0], { timeoutMs: 15_000 });
    expect(JSON.parse(blocked.body).data).toMatchObject({ source: 'blocklist', gtin, reason: 'recalled' });
  });

  it('sends code.reported for a report, code.blocked when the owner confirms it, scan.counterfeit for a forged link', async () => {
    ok(
      await api('PATCH', `/webhooks/endpoints/${endpoint.id}`, {
        eventTypes: ['scan.suspicious', 'scan.counterfeit', 'code.blocked', 'code.reported', 'test'],
      }),
    );
    const code = ok(await api('POST', '/code/generate', { gtin, serialNumber: 'WH-2', batchNumber: 'L1' }), 201);
    const report = ok(await api('POST', '/code/report', { url: code.url, reason: 'label peeling' }), 201);
    const reported = await waitFor('code.reported', async () => ofType('code.reported')[0], { timeoutMs: 15_000 });
    expect(JSON.parse(reported.body).data).toMatchObject({
      reportId: report.reportId,
      gtin,
      serial: 'WH-2',
      reason: 'label peeling',
    });
    ok(await api('POST', `/code/reports/${report.reportId}/confirm`, { reason: 'confirmed fake' }));
    const confirmed = await waitFor(
      'code.blocked from the report',
      async () => ofType('code.blocked').find((each) => JSON.parse(each.body).data.source === 'report'),
      { timeoutMs: 15_000 },
    );
    expect(JSON.parse(confirmed.body).data).toMatchObject({ reportId: report.reportId, serial: 'WH-2' });
    // A forged link of the brand's GTIN: COUNTERFEIT, and the brand hears of it.
    const forged = code.url.replace(/sig=(.)/, (_: string, c: string) => `sig=${c === 'A' ? 'B' : 'A'}`);
    expect(ok(await api('POST', '/code/verify', { url: forged })).verdict).toBe('COUNTERFEIT');
    const counterfeit = await waitFor('scan.counterfeit', async () => ofType('scan.counterfeit')[0], { timeoutMs: 5_000 });
    expect(JSON.parse(counterfeit.body).data).toMatchObject({ gtin, serial: 'WH-2', verdict: 'COUNTERFEIT' });
  });

  it('sends code.unblocked when the owner lifts a report’s block or removes a blocklist entry, and only to endpoints that asked', async () => {
    const code = ok(await api('POST', '/code/generate', { gtin, serialNumber: 'WH-LIFT', batchNumber: 'L1' }), 201);
    const report = ok(await api('POST', '/code/report', { url: code.url, reason: 'looked odd' }), 201);
    ok(await api('POST', `/code/reports/${report.reportId}/confirm`, { reason: 'confirmed fake' }));
    const block = ok(await api('POST', '/blocklist', { gtin, serial: 'WH-UNLIST', kind: 'withdrawn', reason: 'recalled' }), 201);
    // Subscribed to code.blocked only: the unblocks below must not reach it.
    const blockedOnly = ok(
      await api('POST', '/webhooks/endpoints', { url: `${url}?only=blocked`, eventTypes: ['code.blocked'] }),
      201,
    );
    ok(await api('PATCH', `/webhooks/endpoints/${endpoint.id}`, { eventTypes: ['code.unblocked'] }));
    ok(await api('POST', `/code/reports/${report.reportId}/lift`, { reason: 'our mistake' }));
    // Removed twice at once (a double click, two operators): one removal, one message.
    const [one, other] = await Promise.all([
      api('DELETE', `/blocklist/${block.blockId}`),
      api('DELETE', `/blocklist/${block.blockId}`),
    ]);
    expect([ok(one).status, ok(other).status]).toEqual(['removed', 'removed']);
    expect(ok(one).removedAt).toBe(ok(other).removedAt);
    const unblocked = await waitFor(
      'both code.unblocked',
      async () => (ofType('code.unblocked').length >= 2 ? ofType('code.unblocked') : undefined),
      {
        timeoutMs: 15_000,
      },
    );
    const bodies = unblocked.map((delivery) => JSON.parse(delivery.body));
    expect(bodies.find((body) => body.data.source === 'report')?.data).toEqual({
      source: 'report',
      assetId: code.assetId,
      reportId: report.reportId,
      gtin,
      serial: 'WH-LIFT',
      reason: 'our mistake',
    });
    expect(bodies.find((body) => body.data.source === 'blocklist')?.data).toMatchObject({
      source: 'blocklist',
      blockId: block.blockId,
      gtin,
      status: 'removed',
    });
    for (const delivery of unblocked) {
      expect(new Webhook(endpoint.secret).verify(delivery.body, delivery.headers as Record<string, string>)).toBeTruthy();
    }
    // Each announced once (a second would have come within the delivery poll's 50 ms), and none
    // went to the endpoint that did not ask for code.unblocked.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(ofType('code.unblocked')).toHaveLength(2);
    const sentToBlockedOnly = ok(await api('GET', `/webhooks/endpoints/${blockedOnly.id}/messages`));
    expect(sentToBlockedOnly.messages.map((message: Json) => message.eventType)).not.toContain('code.unblocked');
    ok(await api('DELETE', `/webhooks/endpoints/${blockedOnly.id}`), 204);
  });

  it('sends transfer.completed for a sale, transfer.locked after five wrong codes and transfer.cancelled, through the auction API', async () => {
    ok(
      await api('PATCH', `/webhooks/endpoints/${endpoint.id}`, {
        eventTypes: ['transfer.completed', 'transfer.locked', 'transfer.cancelled'],
      }),
    );
    const registered = ok(
      await api('POST', '/auction/objects/register', { title: 'Hooked lot', category: 'watch', ownerId: 'client-jane' }),
      201,
    );
    const objectId = registered.object.id as string;
    const sale = { objectId, fromOwnerId: 'client-jane', toOwnerId: 'buyer-1', salePrice: 900, saleCurrency: 'EUR' };
    const first = ok(await api('POST', '/auction/transfers/initiate', sale), 201);
    ok(await api('POST', `/auction/transfers/${first.transferId}/confirm`, { transferCode: first.transferCode }));
    const completed = await waitFor(
      'transfer.completed',
      async () => ofType('transfer.completed').find((each) => JSON.parse(each.body).data.transferId === first.transferId),
      { timeoutMs: 15_000 },
    );
    expect(JSON.parse(completed.body).data).toMatchObject({
      assetId: objectId,
      transferId: first.transferId,
      toOwnerId: 'buyer-1',
    });

    const second = ok(
      await api('POST', '/auction/transfers/initiate', { ...sale, fromOwnerId: 'buyer-1', toOwnerId: 'buyer-2' }),
      201,
    );
    const wrong = second.transferCode === '000000' ? '000001' : '000000';
    for (let attempt = 0; attempt < 5; attempt++) {
      await api('POST', `/auction/transfers/${second.transferId}/confirm`, { transferCode: wrong });
    }
    const locked = await waitFor(
      'transfer.locked',
      async () => ofType('transfer.locked').find((each) => JSON.parse(each.body).data.transferId === second.transferId),
      { timeoutMs: 15_000 },
    );
    expect(JSON.parse(locked.body).data).toMatchObject({ assetId: objectId, transferId: second.transferId });

    const third = ok(
      await api('POST', '/auction/transfers/initiate', { ...sale, fromOwnerId: 'buyer-1', toOwnerId: 'buyer-3' }),
      201,
    );
    ok(await api('POST', `/auction/transfers/${third.transferId}/cancel`));
    const cancelled = await waitFor(
      'transfer.cancelled',
      async () => ofType('transfer.cancelled').find((each) => JSON.parse(each.body).data.transferId === third.transferId),
      { timeoutMs: 15_000 },
    );
    expect(JSON.parse(cancelled.body).data).toEqual({ assetId: objectId, transferId: third.transferId });
  });

  it('answers no SUSPICIOUS verdict before its scan is stored: a JetStream that refuses events gets 503, and the retry is told', async () => {
    const code = ok(await api('POST', '/code/generate', { gtin, serialNumber: 'WH-REFUSED', batchNumber: 'L1' }), 201);
    const genuine = ok(await api('POST', '/code/generate', { gtin, serialNumber: 'WH-FINE', batchNumber: 'L1' }), 201);
    ok(await api('POST', '/blocklist', { gtin, serial: 'WH-REFUSED', kind: 'withdrawn', reason: 'recalled' }), 201);
    ok(await api('PATCH', `/webhooks/endpoints/${endpoint.id}`, { eventTypes: ['scan.suspicious'] }));
    await setEventStreamRefusing(product.natsUrl, product.namespace, true);
    try {
      const refused = await api('POST', '/code/verify', { url: code.url });
      expect(refused.status, JSON.stringify(refused.body)).toBe(503);
      expect(refused.body.error?.code).toBe('SERVICE_UNAVAILABLE');
      // An AUTHENTIC answer does not wait for its scan, and is still given.
      expect(ok(await api('POST', '/code/verify', { url: genuine.url })).verdict).toBe('AUTHENTIC');
    } finally {
      await setEventStreamRefusing(product.natsUrl, product.namespace, false);
    }
    // Nothing of the refused scan comes, even a while later.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const refusedOnes = () =>
      ofType('scan.suspicious').filter((delivery) => JSON.parse(delivery.body).data.serial === 'WH-REFUSED');
    expect(refusedOnes()).toEqual([]);
    const retried = ok(await api('POST', '/code/verify', { url: code.url }));
    expect(retried.verdict).toBe('SUSPICIOUS');
    const delivery = await waitFor('scan.suspicious of the retry', async () => refusedOnes()[0], {
      timeoutMs: 5_000,
      intervalMs: 10,
    });
    expect(JSON.parse(delivery.body).data).toMatchObject({ gtin, serial: 'WH-REFUSED', verdict: 'SUSPICIOUS' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(refusedOnes()).toHaveLength(1);
  });

  it(`holds at most ${maxWebhookEndpoints} endpoints per account and environment, also against creations at once; pages them with cursors, refusing forged ones (400)`, async () => {
    const other = ok(
      await call<Json>(product.url, 'POST', '/api/v1/accounts', {
        key: product.operatorKey,
        body: { name: 'Hooks, many endpoints', tier: 'enterprise' },
      }),
      201,
    );
    const theirs = (method: string, path: string, body?: unknown) =>
      call<Json>(product.url, method, `/api/v1${path}`, { key: other.apiKey.secret, body });
    const answers = await Promise.all(
      Array.from({ length: maxWebhookEndpoints + 5 }, (_, n) =>
        theirs('POST', '/webhooks/endpoints', { url: `${url}?n=${n}`, eventTypes: ['test'] }),
      ),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(maxWebhookEndpoints);
    const refusal = answers.find((answer) => answer.status !== 201) as (typeof answers)[number];
    expect([refusal.status, refusal.body.error?.code]).toEqual([409, 'CONFLICT']);
    expect(refusal.body.error?.details).toEqual({ limit: maxWebhookEndpoints });
    // Another account, and the first one's own endpoints, are not affected; a deleted one frees a place.
    const mine = ok(await api('POST', '/webhooks/endpoints', { url: `${url}?mine`, eventTypes: ['test'] }), 201);
    ok(await api('DELETE', `/webhooks/endpoints/${mine.id}`), 204);
    const created = answers.filter((answer) => answer.status === 201).map((answer) => answer.body);
    ok(await theirs('DELETE', `/webhooks/endpoints/${created[0]?.id}`), 204);
    ok(await theirs('POST', '/webhooks/endpoints', { url: `${url}?again`, eventTypes: ['test'] }), 201);

    // A cursor given out pages on; one whose time is no real instant is a 400, not a database error.
    const first = ok(await theirs('GET', '/webhooks/endpoints?limit=5'));
    expect(first.pagination.hasMore).toBe(true);
    const second = ok(await theirs('GET', `/webhooks/endpoints?limit=5&cursor=${first.pagination.nextCursor}`));
    expect(second.endpoints).toHaveLength(5);
    expect(second.endpoints[0].id).not.toBe(first.endpoints[0].id);
    const [, lastId] = JSON.parse(Buffer.from(first.pagination.nextCursor, 'base64url').toString()) as [string, string];
    const messageId = `msg_${'0'.repeat(32)}`;
    for (const at of [
      '2026-99-01T00:00:00.000Z',
      '2026-02-30T00:00:00.000Z',
      '2026-01-01T25:61:00.000Z',
      '0000-01-01T00:00:00.000Z',
      '2026-01-01T::::Z',
    ]) {
      const forged = (id: string) => Buffer.from(JSON.stringify([at, id])).toString('base64url');
      const endpointsPage = await theirs('GET', `/webhooks/endpoints?cursor=${forged(lastId)}`);
      expect([endpointsPage.status, endpointsPage.body.error?.code], at).toEqual([400, 'VALIDATION_ERROR']);
      const messagesPage = await theirs('GET', `/webhooks/endpoints/${lastId}/messages?cursor=${forged(messageId)}`);
      expect([messagesPage.status, messagesPage.body.error?.code], at).toEqual([400, 'VALIDATION_ERROR']);
    }
  });

  it('rotates a secret once per Idempotency-Key: a retry is answered the same secret (Idempotent-Replayed), and the first secret still signs', async () => {
    const hook = ok(await api('POST', '/webhooks/endpoints', { url: `${url}?rotating`, eventTypes: ['test'] }), 201);
    try {
      const rotate = () =>
        call<Json>(product.url, 'POST', `/api/v1/webhooks/endpoints/${hook.id}/rotate-secret`, {
          key,
          headers: { 'idempotency-key': `rotate-${hook.id}` },
        });
      const first = await rotate();
      const retry = await rotate(); // the first answer was lost, say
      expect(ok(first).secret).toMatch(/^whsec_/);
      expect(ok(retry)).toEqual(first.body);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      // The gateway killed after the service rotated, before it stored the answer: the retry runs the
      // rotation again, which finds the key's secret in place and answers it (before: a second rotation,
      // and the receiver's first secret stopped at once).
      const db = createPostgresDatabase({ connectionString: product.databaseUrl, maxConnections: 1 });
      try {
        await db.query('DELETE FROM idempotent_requests');
      } finally {
        await db.close();
      }
      const rerun = await rotate();
      expect(rerun.headers.get('idempotent-replayed')).toBeNull();
      expect(ok(rerun).secret).toBe(first.body.secret);
      // One rotation: the receiver's first secret and the new one both verify the next message.
      const queued = ok(await api('POST', `/webhooks/endpoints/${hook.id}/test`), 202);
      const delivery = await waitFor('the test after the rotation', async () =>
        received.find((each) => each.headers['webhook-id'] === queued.id),
      );
      for (const secret of [hook.secret, first.body.secret]) {
        expect(new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>)).toBeTruthy();
      }
    } finally {
      ok(await api('DELETE', `/webhooks/endpoints/${hook.id}`), 204);
    }
  });

  it('a delivery worker killed mid-delivery: the message is delivered once after the restart (same webhook-id)', async () => {
    let held: (() => void) | undefined;
    const firstArrived = new Promise<void>((resolve) => {
      held = resolve;
    });
    answer = (delivery, response) => {
      if (JSON.parse(delivery.body).type === 'test' && held) {
        const arrived = held;
        held = undefined;
        arrived(); // never answered: the worker dies waiting
        return;
      }
      response.writeHead(200).end();
    };
    const queued = ok(await api('POST', `/webhooks/endpoints/${endpoint.id}/test`), 202);
    await firstArrived;
    await product.kill('compliance-service-1');
    await product.restart('compliance-service-1');
    const delivered = await waitFor(
      'delivered after the restart',
      async () => {
        const { messages } = ok(await api('GET', `/webhooks/endpoints/${endpoint.id}/messages?status=delivered`));
        return messages.find((message: Json) => message.id === queued.id);
      },
      { timeoutMs: 20_000 },
    );
    expect(delivered.attempts).toBe(1); // the killed attempt left no outcome
    const sent = received.filter((delivery) => delivery.headers['webhook-id'] === queued.id);
    expect(sent).toHaveLength(2); // the one in flight when the worker died, then the one answered
  }, 40_000);
});

describe('webhooks: one account’s dead endpoint does not hold up another’s', () => {
  it('an endpoint that accepts and never answers, with 40 messages queued, leaves another account’s message to go at once', async () => {
    // The product's own delivery settings (15 s timeout, 30 s lease, 16 slots), not the short ones above.
    const embedded = await startEmbeddedProduct({ HALLMARK_WEBHOOKS_ALLOW_PRIVATE: 'true' });
    // Accepts connections, reads nothing, answers nothing: each attempt there holds its slot 15 s.
    const held = new Set<Socket>();
    const silent = createTcpServer((socket) => {
      held.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => held.delete(socket));
    });
    const fastReceived: Delivery[] = [];
    const fast = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        fastReceived.push({ headers: request.headers, body: Buffer.concat(chunks).toString(), at: Date.now() });
        response.writeHead(204).end();
      });
    });
    try {
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      await new Promise<void>((resolve) => fast.listen(0, '127.0.0.1', resolve));
      const as = (apiKey: string) => (method: string, path: string, body?: unknown) =>
        call<Json>(embedded.url, method, `/api/v1${path}`, { key: apiKey, body });
      const operator = as(embedded.operatorKey);
      const a = as(ok(await operator('POST', '/accounts', { name: 'Stalling', tier: 'enterprise' }), 201).apiKey.secret);
      const b = as(ok(await operator('POST', '/accounts', { name: 'Waiting', tier: 'enterprise' }), 201).apiKey.secret);
      const deadEnd = ok(
        await a('POST', '/webhooks/endpoints', {
          url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/never`,
          eventTypes: ['test'],
        }),
        201,
      );
      const alive = ok(
        await b('POST', '/webhooks/endpoints', {
          url: `http://127.0.0.1:${(fast.address() as AddressInfo).port}/hooks`,
          eventTypes: ['test'],
        }),
        201,
      );
      for (let n = 0; n < 40; n++) ok(await a('POST', `/webhooks/endpoints/${deadEnd.id}/test`), 202);
      await waitFor('the dead endpoint’s first connection', async () => (held.size > 0 ? true : undefined), {
        timeoutMs: 5_000,
      });
      const askedAt = Date.now();
      const queued = ok(await b('POST', `/webhooks/endpoints/${alive.id}/test`), 202);
      // Before: every slot at the dead endpoint, 15 s each, B's message behind all 40 (30 s).
      const delivery = await waitFor(
        'the other account’s test message',
        async () => fastReceived.find((each) => each.headers['webhook-id'] === queued.id),
        { timeoutMs: 5_000, intervalMs: 20 },
      );
      expect(delivery.at - askedAt).toBeLessThan(5_000);
      // The dead endpoint holds 2 deliveries at most, not the worker's 16.
      expect(held.size).toBeLessThanOrEqual(2);
    } finally {
      for (const socket of held) socket.destroy();
      silent.close();
      fast.closeAllConnections();
      fast.close();
      await embedded.stop();
    }
  }, 60_000);
});

describe('webhooks (embedded)', () => {
  it('delivers a suspicious scan from the one-process form too, signed', async () => {
    const embedded = await startEmbeddedProduct({ HALLMARK_WEBHOOKS_ALLOW_PRIVATE: 'true' });
    try {
      const as = (key: string) => (method: string, path: string, body?: unknown) =>
        call<Json>(embedded.url, method, `/api/v1${path}`, { key, body });
      const brand = ok(await as(embedded.operatorKey)('POST', '/accounts', { name: 'Hooks embedded', tier: 'enterprise' }), 201);
      ok(await as(embedded.operatorKey)('POST', `/accounts/${brand.account.id}/gtins`, { gtin }), 201);
      const api2 = as(brand.apiKey.secret);
      const hook = ok(await api2('POST', '/webhooks/endpoints', { url, eventTypes: ['scan.suspicious'] }), 201);
      const code = ok(await api2('POST', '/code/generate', { gtin, serialNumber: 'WH-E', batchNumber: 'L1' }), 201);
      ok(await api2('POST', '/blocklist', { gtin, serial: 'WH-E', kind: 'withdrawn', reason: 'recalled' }), 201);
      expect(ok(await api2('POST', '/code/verify', { url: code.url })).verdict).toBe('SUSPICIOUS');
      const delivery = await waitFor(
        'the embedded scan.suspicious',
        async () => ofType('scan.suspicious').find((each) => JSON.parse(each.body).data.serial === 'WH-E'),
        { timeoutMs: 5_000, intervalMs: 10 },
      );
      new Webhook(hook.secret).verify(delivery.body, delivery.headers as Record<string, string>);
    } finally {
      await embedded.stop();
    }
  }, 60_000);
});
