// A tenant cannot take the webhook worker's delivery slots past its limits (docs/WEBHOOKS.md, "Fair
// delivery": 2 in flight per endpoint, 4 per account). Found by review: replaying a message while
// its delivery still ran cleared its lease, and deleting an endpoint removed its leased messages, so
// deliveries whose connections stayed open no longer counted; an account whose endpoint never
// answered held all 16 slots and another account's alert waited up to 15 s per slot.
// Here, over HTTP with the product's own timings (15 s attempt, 30 s lease): an attacker replays an
// in-flight message every 150 ms and deletes and recreates endpoints mid-delivery, while the
// receiver counts its open connections; another account's message still goes at once. In both
// forms, the distributed one with two compliance-service replicas sharing PostgreSQL.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { call, startEmbeddedProduct } from '../support/embedded.ts';
import { waitFor } from '../support/wait.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

const settings = { HALLMARK_WEBHOOKS_ALLOW_PRIVATE: 'true', HALLMARK_WEBHOOK_POLL_MS: '50' };
const perEndpoint = 2;
const perAccount = 4;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function ok(response: { status: number; body: Json }, status = 200) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  return response.body;
}

/**
 * A receiver that accepts, reads the request and never answers: each attempt holds its connection
 * (and its slot) until the worker's timeout. Counts the connections open now, at most, and per path
 * (one path per endpoint).
 */
function startDeadEnd() {
  const open = new Set<Socket>();
  const pathOf = new Map<Socket, string>();
  let most = 0;
  let mostAtOnePath = 0;
  let total = 0;
  const server = createServer((request: IncomingMessage, _response: ServerResponse) => {
    request.resume();
    const path = request.url ?? '';
    pathOf.set(request.socket, path);
    const atPath = [...open].filter((socket) => pathOf.get(socket) === path).length;
    mostAtOnePath = Math.max(mostAtOnePath, atPath);
  });
  server.on('connection', (socket: Socket) => {
    total += 1;
    open.add(socket);
    most = Math.max(most, open.size);
    socket.on('error', () => {});
    socket.on('close', () => {
      open.delete(socket);
      pathOf.delete(socket);
    });
  });
  return {
    server,
    listening: new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve)),
    url: (path: string) => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    stats: () => ({ open: open.size, most, mostAtOnePath, total }),
    close() {
      server.close();
      for (const socket of open) socket.destroy();
    },
  };
}

describe.each([
  ['embedded', () => startEmbeddedProduct(settings)],
  ['distributed', () => startDistributedProduct(settings, { replicas: { 'compliance-service': 2 } })],
])('one tenant’s replays and deleted endpoints do not take the webhook slots (%s form)', (_form, start) => {
  let product: RunningProduct;
  const deadEnd = startDeadEnd();
  const arrived = new Map<string, number>();
  const fast = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      arrived.set(String(request.headers['webhook-id']), Date.now());
      response.writeHead(204).end();
    });
  });

  beforeAll(async () => {
    await deadEnd.listening;
    await new Promise<void>((resolve) => fast.listen(0, '127.0.0.1', resolve));
    product = await start();
  }, 120_000);

  afterAll(async () => {
    // The dead end's connections first: the workers' attempts end at once, and stopping does not
    // wait out their 15 s timeout.
    deadEnd.close();
    fast.closeAllConnections();
    fast.close();
    await product?.stop();
  }, 60_000);

  it('the attacker never holds more than 2 connections per endpoint, 4 in all; the other account’s message goes at once', async () => {
    const as = (key: string) => (method: string, path: string, body?: unknown) =>
      call<Json>(product.url, method, `/api/v1${path}`, { key, body });
    const operator = as(product.operatorKey);
    const attacker = as(ok(await operator('POST', '/accounts', { name: 'Slot taker', tier: 'enterprise' }), 201).apiKey.secret);
    const victim = as(ok(await operator('POST', '/accounts', { name: 'Alerted', tier: 'enterprise' }), 201).apiKey.secret);
    const theirs = ok(
      await victim('POST', '/webhooks/endpoints', {
        url: `http://127.0.0.1:${(fast.address() as AddressInfo).port}/alerts`,
        eventTypes: ['test'],
      }),
      201,
    );
    const deadEndpoint = async (name: string) =>
      ok(await attacker('POST', '/webhooks/endpoints', { url: deadEnd.url(`/${name}`), eventTypes: ['test'] }), 201).id as string;

    // Replays of one message while its delivery runs, every 150 ms: each used to start another connection.
    const kept = await deadEndpoint('kept');
    const message = ok(await attacker('POST', `/webhooks/endpoints/${kept}/test`), 202).id as string;
    await waitFor('the first connection to the dead end', async () => (deadEnd.stats().total > 0 ? true : undefined), {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    const replay = () => attacker('POST', `/webhooks/endpoints/${kept}/messages/${message}/replay`);
    for (let n = 0; n < 20; n++) {
      ok(await replay(), 202);
      await sleep(150);
    }

    // Endpoints deleted mid-delivery (their messages with them) and made again: each used to free the places.
    for (let n = 0; n < 6; n++) {
      const doomed = await deadEndpoint(`doomed-${n}`);
      ok(await attacker('POST', `/webhooks/endpoints/${doomed}/test`), 202);
      ok(await attacker('POST', `/webhooks/endpoints/${doomed}/test`), 202);
      await sleep(300);
      ok(await attacker('DELETE', `/webhooks/endpoints/${doomed}`), 204);
    }

    // The other account's alert, while the attacker keeps replaying (bounded: 100 replays at most).
    let measuring = true;
    const replaying = (async () => {
      for (let n = 0; measuring && n < 100; n++) {
        await replay();
        await sleep(150);
      }
    })();
    let waited: number;
    try {
      const askedAt = Date.now();
      const queued = ok(await victim('POST', `/webhooks/endpoints/${theirs.id}/test`), 202);
      // Before the fix: every slot at the dead end, the first of them freed 15 s after it opened.
      const deliveredAt = await waitFor('the other account’s message', async () => arrived.get(queued.id), {
        timeoutMs: 20_000,
        intervalMs: 20,
      });
      waited = deliveredAt - askedAt;
    } finally {
      measuring = false;
      await replaying;
    }

    const seen = deadEnd.stats();
    // The attack did hold deliveries open at once, and never past the limits.
    expect(seen.most, JSON.stringify(seen)).toBeGreaterThanOrEqual(perEndpoint);
    expect(seen.mostAtOnePath, JSON.stringify(seen)).toBeLessThanOrEqual(perEndpoint);
    expect(seen.most, JSON.stringify(seen)).toBeLessThanOrEqual(perAccount);
    // Well under the 15 s attempt timeout (before the fix: 6-11 s); at once, but for a slow machine.
    expect(waited).toBeLessThan(5_000);
  }, 120_000);
});
