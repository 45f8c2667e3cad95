// "A counterfeiter who wants the brand not to hear" (a helper's review of 2026-12-06): a third party
// (a few tenants, anyone with forged links) delaying a brand's scan.suspicious / scan.counterfeit
// alert, over real HTTP against the embedded form, a local receiver on 127.0.0.1 as the brand's
// endpoint. Both tests failed before their fixes (worker.ts, claim; compliance migration 0013): four
// tenants with slow 2xx receivers held every slot and the brand's alerts waited 10 and 38 s; a
// blocklisted clone's scan.counterfeit waited 15 s behind 108 forged ones (docs/WEBHOOKS.md, "Fair
// delivery").
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';
import { waitFor } from '../support/wait.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

interface Delivery {
  path: string;
  json: Json;
  at: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function ok(response: { status: number; body: Json }, status = 200) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  return response.body;
}

function gtinWithCheckDigit(first13: string): string {
  const digits = first13.split('').map(Number);
  let sum = 0;
  for (let i = 0; i < 13; i++) sum += (digits[i] as number) * (i % 2 === 0 ? 3 : 1);
  return `${first13}${(10 - (sum % 10)) % 10}`;
}
let gtinCounter = randomBytes(2).readUInt16BE(0);
const newGtin = () => gtinWithCheckDigit(`0950600${String(100_000 + ((gtinCounter++ * 7919) % 900_000)).padStart(6, '0')}`);

/** A forged signature: the link's first signature character changed. */
const forge = (url: string) => url.replace(/sig=(.)/, (_: string, c: string) => `sig=${c === 'A' ? 'B' : 'A'}`);

/**
 * A receiver: records every delivery (path, parsed body, arrival time) and answers 204, after
 * `delayMs(path)` milliseconds (0: at once). Counts the connections open at once.
 */
function startReceiver(delayMs: (path: string) => number) {
  const received: Delivery[] = [];
  const open = new Set<Socket>();
  let mostOpen = 0;
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '';
      let json: Json = {};
      try {
        json = JSON.parse(Buffer.concat(chunks).toString());
      } catch {
        // kept as {}
      }
      const answer = () => {
        received.push({ path, json, at: Date.now() });
        response.writeHead(204).end();
      };
      const wait = delayMs(path);
      if (wait > 0) setTimeout(answer, wait);
      else answer();
    });
  });
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    mostOpen = Math.max(mostOpen, open.size);
    socket.on('error', () => {});
    socket.on('close', () => open.delete(socket));
  });
  return {
    received,
    listening: new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve)),
    url: (path: string) => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    mostOpen: () => mostOpen,
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

function helpers(getT: () => TestProduct) {
  const api = (key: string) => (method: string, path: string, body?: unknown) =>
    call<Json>(getT().url, method, `/api/v1${path}`, { key, body });
  const tenant = async (name: string, tier: 'free' | 'starter' | 'enterprise', withGtin: boolean) => {
    const operator = api(getT().product.generatedOperatorKey as string);
    const created = ok(await operator('POST', '/accounts', { name, tier }), 201);
    const gtin = newGtin();
    if (withGtin) ok(await operator('POST', `/accounts/${created.account.id}/gtins`, { gtin }), 201);
    return { id: created.account.id as string, key: created.apiKey.secret as string, gtin };
  };
  return { api, tenant };
}

describe('four tenants whose receivers answer 2xx slowly take every delivery slot (embedded, 2.5 s attempt timeout)', () => {
  let t: TestProduct;
  const { api, tenant } = helpers(() => t);
  // The attackers' receiver acknowledges each message 2 s after it arrives: a success, so no failure
  // streak and no hold (docs/WEBHOOKS.md, "Fair delivery") ever slows it down; the brand's answers at once.
  const receiver = startReceiver((path) => (path.startsWith('/slow-') ? 2_000 : 0));

  beforeAll(async () => {
    await receiver.listening;
    t = await startTestProduct({
      HALLMARK_WEBHOOKS_ALLOW_PRIVATE: 'true',
      HALLMARK_WEBHOOK_TIMEOUT_MS: '2500',
      HALLMARK_WEBHOOK_POLL_MS: '50',
    });
  }, 120_000);
  afterAll(async () => {
    receiver.close();
    await t?.stop();
  }, 60_000);

  // Promise: docs/WEBHOOKS.md, "Fair delivery": "never more than 2 in flight per endpoint and 4 per
  // account (… a quarter of the slots) … another account's `scan.counterfeit` goes at once
  // (test/e2e/webhooks.test.ts: … the other account's message delivered within a second or two)";
  // and "It claims due messages oldest first, an endpoint's `scan.counterfeit` messages after its
  // others". Four free tenants, each with two endpoints that acknowledge slowly and a backlog of
  // `test` messages (POST …/test, 202), hold all 16 slots; the brand's alerts, from a forged scan and
  // from a scan of its withdrawn code, should still go within a few seconds.
  it('the brand’s scan.suspicious and scan.counterfeit still go within seconds, not after the tenants’ backlog', async () => {
    const brand = await tenant('Alerted brand', 'enterprise', true);
    const b = api(brand.key);
    ok(
      await b('POST', '/webhooks/endpoints', {
        url: receiver.url('/brand'),
        eventTypes: ['scan.counterfeit', 'scan.suspicious'],
      }),
      201,
    );
    const genuine = ok(await b('POST', '/code/generate', { gtin: brand.gtin, serialNumber: 'RA-1', batchNumber: 'L1' }), 201);
    const recalled = ok(await b('POST', '/code/generate', { gtin: brand.gtin, serialNumber: 'RA-2', batchNumber: 'L1' }), 201);
    ok(await b('POST', '/blocklist', { gtin: brand.gtin, serial: 'RA-2', kind: 'withdrawn', reason: 'recalled' }), 201);

    const attackers = await Promise.all([0, 1, 2, 3].map((n) => tenant(`Slot holder ${n}`, 'free', false)));
    const endpoints: { key: string; id: string }[] = [];
    for (const [n, attacker] of attackers.entries()) {
      for (const e of [0, 1]) {
        const made = ok(
          await api(attacker.key)('POST', '/webhooks/endpoints', { url: receiver.url(`/slow-${n}-${e}`), eventTypes: ['test'] }),
          201,
        );
        endpoints.push({ key: attacker.key, id: made.id as string });
      }
    }
    const queueTest = (endpoint: { key: string; id: string }) =>
      api(endpoint.key)('POST', `/webhooks/endpoints/${endpoint.id}/test`).then((r) => r.status);
    // A backlog of 12 test messages per endpoint (96 in all: 12 s of the 16 slots at 2 s each).
    for (let round = 0; round < 12; round++) {
      const statuses = await Promise.all(endpoints.map(queueTest));
      expect(
        statuses.every((s) => s === 202),
        JSON.stringify(statuses),
      ).toBe(true);
      await sleep(100);
    }
    await sleep(500);

    // While the brand waits, the tenants keep about as much queued as the slots drain: one test
    // message per endpoint a second (8 a second; the free tier's burst is 20 a second), for at most 30 s.
    let topping = true;
    let toppedUp = 0;
    const topUp = (async () => {
      const until = Date.now() + 30_000;
      while (topping && Date.now() < until) {
        const statuses = await Promise.all(endpoints.map(queueTest));
        toppedUp += statuses.filter((s) => s === 202).length;
        await sleep(1_000);
      }
    })();

    let suspiciousWait = Number.POSITIVE_INFINITY;
    let counterfeitWait = Number.POSITIVE_INFINITY;
    let slowDuring = 0;
    try {
      // A forged scan of the brand's code (any tenant's key: here one of the attackers'), then a scan of its recalled code.
      const forgedAt = Date.now();
      expect(ok(await api(attackers[0]!.key)('POST', '/code/verify', { url: forge(genuine.url) })).verdict).toBe('COUNTERFEIT');
      const suspiciousAt = Date.now();
      expect(ok(await b('POST', '/code/verify', { url: recalled.url })).verdict).toBe('SUSPICIOUS');
      const arrival = (type: string) =>
        waitFor(`the brand's ${type}`, async () => receiver.received.find((d) => d.path === '/brand' && d.json.type === type), {
          timeoutMs: 40_000,
          intervalMs: 25,
        }).catch(() => undefined);
      const [suspicious, counterfeit] = await Promise.all([arrival('scan.suspicious'), arrival('scan.counterfeit')]);
      if (suspicious) suspiciousWait = suspicious.at - suspiciousAt;
      if (counterfeit) counterfeitWait = counterfeit.at - forgedAt;
      const last = Math.max(suspicious?.at ?? Date.now(), counterfeit?.at ?? Date.now());
      slowDuring = receiver.received.filter((d) => d.path.startsWith('/slow-') && d.at > forgedAt && d.at <= last).length;
    } finally {
      topping = false;
      await topUp;
    }
    // On the reviewed code: suspiciousWait ≈ the backlog older than it (12 s here), counterfeitWait ≈
    // until the tenants stop queuing (30 s here): every other account's non-counterfeit message, even
    // one queued after it, is claimed before it (worker.ts, claim: `ORDER BY last, next_attempt_at`).
    const evidence = JSON.stringify({ suspiciousWait, counterfeitWait, slowDuring, toppedUp, mostOpen: receiver.mostOpen() });
    // The attack held every slot (16 connections to the slow receiver at once)…
    expect(receiver.mostOpen(), evidence).toBeGreaterThanOrEqual(16);
    // …and the brand's alerts should not have waited for it: "within a second or two", allowing 3 s.
    expect(suspiciousWait, evidence).toBeLessThan(3_000);
    expect(counterfeitWait, evidence).toBeLessThan(3_000);
  }, 150_000);
});

describe('a brand’s own blocklisted clone among forged-scan alerts (embedded, default timings)', () => {
  let t: TestProduct;
  const { api, tenant } = helpers(() => t);
  // The brand's receiver takes 250 ms a message (a receiver doing real work), as in
  // hostile-webhook-delivery.test.ts's flood test.
  const receiver = startReceiver(() => 250);

  beforeAll(async () => {
    await receiver.listening;
    t = await startTestProduct({ HALLMARK_WEBHOOKS_ALLOW_PRIVATE: 'true', HALLMARK_WEBHOOK_POLL_MS: '50' });
  }, 120_000);
  afterAll(async () => {
    receiver.close();
    await t?.stop();
  }, 60_000);

  // docs/WEBHOOKS.md, "Fair delivery": scan.counterfeit messages go after an endpoint's others because
  // "anyone can cause those by the thousand with forged links", and "a brand's scan.suspicious, block,
  // report and transfer messages do not wait behind such a backlog". docs/API.md, Blocklist: a code
  // the brand put on its blocklist as `counterfeit` (a clone it knows of) answers COUNTERFEIT although
  // its signature verifies; nobody can cause that scan with a forged link. Its alert is the one the
  // brand asked for most directly, and by the docs' own reason it should not queue behind 120 forged
  // ones either (the same test with a `withdrawn` block, SUSPICIOUS, is
  // hostile-webhook-delivery.test.ts's, and passes).
  it('delivers the scan.counterfeit of a blocklisted clone ahead of 120 forged-scan alerts queued before it', async () => {
    const brand = await tenant('Cloned brand', 'enterprise', true);
    const attacker = await tenant('Forger', 'enterprise', false);
    const b = api(brand.key);
    ok(await b('POST', '/webhooks/endpoints', { url: receiver.url('/brand'), eventTypes: ['scan.counterfeit'] }), 201);
    const cloned = ok(await b('POST', '/code/generate', { gtin: brand.gtin, serialNumber: 'CL-1', batchNumber: 'L1' }), 201);
    ok(await b('POST', '/blocklist', { gtin: brand.gtin, serial: 'CL-1', kind: 'counterfeit', reason: 'clone seen' }), 201);

    let refused = 0;
    for (let round = 0; round < 12; round++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          call<Json>(t.url, 'POST', '/api/v1/code/verify', {
            key: attacker.key,
            body: { url: forge(cloned.url).replace('CL-1', `FAKE-${round}-${i}`) },
          }),
        ),
      );
      refused += answers.filter((r) => r.status !== 200).length;
    }
    expect(refused).toBe(0);

    // A shopper's (here the brand's own) scan of the cloned label: genuine signature, blocklisted.
    const scanned = ok(await b('POST', '/code/verify', { url: cloned.url }));
    expect(scanned.verdict).toBe('COUNTERFEIT');
    expect(scanned.checks.signature.passed).toBe(true);
    const scannedAt = Date.now();
    const delivery = await waitFor(
      'the blocklisted clone’s alert',
      async () => receiver.received.find((d) => d.path === '/brand' && d.json.data?.serial === 'CL-1'),
      { timeoutMs: 60_000, intervalMs: 50 },
    );
    const forgedBefore = receiver.received.filter(
      (d) => d.path === '/brand' && d.at > scannedAt && d.at <= delivery.at && d.json.data?.serial !== 'CL-1',
    ).length;
    const evidence = JSON.stringify({ waitedMs: delivery.at - scannedAt, forgedBefore });
    // Behind only the forged alerts already in flight (two an endpoint at most) and those claimed while
    // the clone's alert was still on its way to the queue (its scan event is written behind the answer
    // and the outbox projection reads it: a few hundred ms when CI runs three suites at once; one such
    // run saw 3, at 483 ms), never the backlog: on the reviewed code it waited for all 120.
    expect(forgedBefore, evidence).toBeLessThanOrEqual(4);
    expect(delivery.at - scannedAt, evidence).toBeLessThan(3_000);
  }, 150_000);
});
