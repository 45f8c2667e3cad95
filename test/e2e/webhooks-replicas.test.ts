// Webhooks in the distributed form with two gateways and two compliance-service replicas (from a
// review of 2026-12-05; each replica runs the webhook projection and a delivery worker): a secret
// rotated while a delivery is in flight, an endpoint disabled or deleted mid-retry through the other
// gateway, a replica killed mid-delivery, replay-all through both gateways at once, another tenant's
// ids on every route, and a receiver that holds its connection open. Receivers are loopback servers
// of this file; every wait is bounded.
import { createHmac } from 'node:crypto';
import { readdir, readFile, readlink } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DistributedProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { type ApiResponse, call } from '../support/embedded.ts';
import { waitFor } from '../support/wait.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

interface Delivery {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** When the request's headers arrived (Date.now()). */
  at: number;
  /** The sender's port: the compliance-service socket it came from. */
  remotePort: number;
  request: IncomingMessage;
}

type Answer = (delivery: Delivery, response: ServerResponse) => void;

const timeoutMs = 2_000;
const retryMs = 200;
let product: DistributedProduct;
let receiverPort = 0;
const received: Delivery[] = [];
/** How each receiver path answers; the default acknowledges with 204. */
const answers = new Map<string, Answer>();
const receiver = createServer((request, response) => {
  const at = Date.now();
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const delivery: Delivery = {
      path: request.url ?? '',
      headers: request.headers,
      body: Buffer.concat(chunks).toString(),
      at,
      remotePort: request.socket.remotePort ?? 0,
      request,
    };
    received.push(delivery);
    const answer = answers.get(delivery.path) ?? ((_d, r) => r.writeHead(204).end());
    answer(delivery, response);
  });
});

let pathCounter = 0;
function newPath(): string {
  pathCounter += 1;
  return `/r${pathCounter}-${Date.now().toString(36)}`;
}
const hookUrl = (path: string) => `http://127.0.0.1:${receiverPort}${path}`;
const at = (path: string) => received.filter((delivery) => delivery.path === path);

/** The API on gateway `replica` (0 or 1). */
const api = (replica: number, method: string, path: string, key: string, body?: unknown, headers?: Record<string, string>) =>
  call<Json>(product.gatewayUrls[replica % 2] as string, method, `/api/v1${path}`, {
    key,
    ...(body !== undefined ? { body } : {}),
    ...(headers ? { headers } : {}),
  });

function ok(response: ApiResponse<Json>, status = 200): Json {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  return response.body;
}

async function account(name: string): Promise<{ key: string; id: string; testKey: string }> {
  const created = ok(await api(0, 'POST', '/accounts', product.operatorKey, { name, tier: 'enterprise' }), 201);
  const key = created.apiKey.secret as string;
  const testKey = ok(await api(1, 'POST', '/keys', key, { name: 'sandbox', scopes: ['*'], environment: 'test' }), 201);
  return { key, id: created.account.id as string, testKey: testKey.secret as string };
}

async function endpoint(
  key: string,
  path: string,
  eventTypes = ['test', 'scan.suspicious'],
): Promise<{ id: string; secret: string }> {
  const created = ok(await api(0, 'POST', '/webhooks/endpoints', key, { url: hookUrl(path), eventTypes }), 201);
  return { id: created.id as string, secret: created.secret as string };
}

/** The documented scheme (docs/WEBHOOKS.md, "Verifying a message", the Python example) by hand. */
function v1Verifies(secret: string, delivery: Delivery): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key)
    .update(`${delivery.headers['webhook-id']}.${delivery.headers['webhook-timestamp']}.${delivery.body}`)
    .digest('base64');
  return String(delivery.headers['webhook-signature'])
    .split(' ')
    .some((entry) => entry.startsWith('v1,') && entry.slice(3) === expected);
}
const v1Count = (delivery: Delivery) =>
  String(delivery.headers['webhook-signature'])
    .split(' ')
    .filter((entry) => entry.startsWith('v1,')).length;
function libraryVerifies(secret: string, delivery: Delivery): boolean {
  try {
    new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The compliance-service replica whose process holds the connection a delivery came over (/proc). */
async function senderOf(delivery: Delivery): Promise<string | undefined> {
  const hex = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');
  const table = await readFile('/proc/net/tcp', 'utf8');
  const row = table
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .find((cols) => cols[1]?.endsWith(`:${hex(delivery.remotePort)}`) && cols[2]?.endsWith(`:${hex(receiverPort)}`));
  const inode = row?.[9];
  if (!inode) return undefined;
  for (const name of ['compliance-service-1', 'compliance-service-2']) {
    const pid = product.process(name).child.pid;
    if (!pid) continue;
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const link = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      if (link === `socket:[${inode}]`) return name;
    }
  }
  return undefined;
}

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverPort = (receiver.address() as AddressInfo).port;
  product = await startDistributedProduct(
    {
      HALLMARK_WEBHOOKS_ALLOW_PRIVATE: 'true',
      HALLMARK_WEBHOOK_RETRY_SCHEDULE_MS: Array.from({ length: 8 }, () => String(retryMs)).join(','),
      HALLMARK_WEBHOOK_TIMEOUT_MS: String(timeoutMs),
      HALLMARK_WEBHOOK_LEASE_MS: '3000',
      HALLMARK_WEBHOOK_POLL_MS: '50',
    },
    { gateways: 2, replicas: { 'compliance-service': 2 } },
  );
}, 180_000);

afterAll(async () => {
  receiver.closeAllConnections();
  receiver.close();
  await product?.stop();
}, 60_000);

describe('webhooks with two gateways and two compliance-service replicas', () => {
  it('a secret rotated (through the other gateway) while an attempt is in flight: that attempt carries the old secret alone, the retry both, a second rotation drops the oldest', async () => {
    const brand = await account('Rotating brand');
    const path = newPath();
    const hook = await endpoint(brand.key, path);
    let release: ((status: number) => void) | undefined;
    const firstHeld = new Promise<void>((resolve) => {
      answers.set(path, (_delivery, response) => {
        if (!release) {
          release = (status) => response.writeHead(status).end();
          resolve();
          return;
        }
        response.writeHead(204).end();
      });
    });
    const queued = ok(await api(0, 'POST', `/webhooks/endpoints/${hook.id}/test`, brand.key), 202);
    await firstHeld;
    const rotated = ok(await api(1, 'POST', `/webhooks/endpoints/${hook.id}/rotate-secret`, brand.key));
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(Date.parse(rotated.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(23 * 3_600_000);
    release?.(500);
    const second = await waitFor(
      'the retry after the rotation',
      async () => at(path).filter((delivery) => delivery.headers['webhook-id'] === queued.id)[1],
      { timeoutMs: 10_000, intervalMs: 20 },
    );
    const first = at(path)[0] as Delivery;
    // The attempt in flight was signed before the rotation: the old secret alone.
    expect(v1Count(first)).toBe(1);
    expect(v1Verifies(hook.secret, first) && libraryVerifies(hook.secret, first)).toBe(true);
    // The retry: both secrets (grace), each verifying by the documented scheme and by the library.
    expect(v1Count(second)).toBe(2);
    for (const secret of [hook.secret, rotated.secret]) {
      expect(v1Verifies(secret, second)).toBe(true);
      expect(libraryVerifies(secret, second)).toBe(true);
    }
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    // A second rotation (through the first gateway) drops the oldest secret.
    const again = ok(await api(0, 'POST', `/webhooks/endpoints/${hook.id}/rotate-secret`, brand.key));
    const next = ok(await api(1, 'POST', `/webhooks/endpoints/${hook.id}/test`, brand.key), 202);
    const third = await waitFor(
      'the message after the second rotation',
      async () => at(path).find((delivery) => delivery.headers['webhook-id'] === next.id),
      { timeoutMs: 10_000, intervalMs: 20 },
    );
    expect(v1Count(third)).toBe(2);
    expect(v1Verifies(again.secret, third) && v1Verifies(rotated.secret, third)).toBe(true);
    expect(v1Verifies(hook.secret, third) || libraryVerifies(hook.secret, third)).toBe(false);
  }, 60_000);

  it('an endpoint disabled mid-retry through the other gateway receives nothing after the 200, over many rounds; enabled again, it delivers', async () => {
    const brand = await account('Disabling brand');
    const path = newPath();
    const hook = await endpoint(brand.key, path);
    answers.set(path, (_delivery, response) => response.writeHead(500).end());
    const late: Array<{ round: number; lateByMs: number; id: unknown }> = [];
    for (let round = 0; round < 5; round++) {
      const queued = ok(await api(round % 2, 'POST', `/webhooks/endpoints/${hook.id}/test`, brand.key), 202);
      const before = at(path).length;
      // Retries every 200 ms (each replica polls every 50 ms): disable within 60 ms of an attempt, while the
      // endpoint is held (a disable racing a claim itself is in the report, not here: rare, so not a stable test).
      await waitFor('a retry in progress', async () => (at(path).length > before ? true : undefined), {
        timeoutMs: 10_000,
        intervalMs: 5,
      });
      await sleep((round * 7) % 60);
      const disabled = await api((round + 1) % 2, 'POST', `/webhooks/endpoints/${hook.id}/disable`, brand.key);
      const answeredAt = Date.now();
      expect(disabled.status).toBe(200);
      expect(disabled.body.status).toBe('disabled');
      await sleep(3 * retryMs + 300);
      for (const delivery of at(path).filter((each) => each.at > answeredAt)) {
        late.push({ round, lateByMs: delivery.at - answeredAt, id: delivery.headers['webhook-id'] });
      }
      const message = ok(await api(round % 2, 'GET', `/webhooks/endpoints/${hook.id}/messages`, brand.key)).messages.find(
        (each: Json) => each.id === queued.id,
      );
      expect(message.status).toBe('pending');
      // Messages of earlier rounds are pending too: delete them from the picture by enabling only
      // after this round's check, then waiting for the next round's message.
      ok(await api(round % 2, 'PATCH', `/webhooks/endpoints/${hook.id}`, brand.key, { enabled: true }));
    }
    expect(late, 'deliveries that arrived after the disable was answered').toEqual([]);
    // Enabled again and answering: the waiting messages go.
    answers.set(path, (_delivery, response) => response.writeHead(204).end());
    await waitFor(
      'every message delivered once enabled',
      async () => {
        const pending = ok(await api(0, 'GET', `/webhooks/endpoints/${hook.id}/messages?status=pending`, brand.key)).messages;
        return pending.length === 0 ? true : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 200 },
    );
  }, 120_000);

  it('an endpoint deleted mid-retry, and one disabled with its attempt in flight, through the other gateway: nothing is sent after the answer', async () => {
    const brand = await account('Deleting brand');
    const gonePath = newPath();
    const gone = await endpoint(brand.key, gonePath);
    answers.set(gonePath, (_delivery, response) => response.writeHead(503).end());
    ok(await api(0, 'POST', `/webhooks/endpoints/${gone.id}/test`, brand.key), 202);
    await waitFor('two attempts', async () => (at(gonePath).length >= 2 ? true : undefined), {
      timeoutMs: 10_000,
      intervalMs: 5,
    });
    ok(await api(1, 'DELETE', `/webhooks/endpoints/${gone.id}`, brand.key), 204);
    const deletedAt = Date.now();
    const heldPath = newPath();
    const held = await endpoint(brand.key, heldPath);
    let release: (() => void) | undefined;
    const arrived = new Promise<void>((resolve) => {
      answers.set(heldPath, (_delivery, response) => {
        release = () => response.writeHead(500).end();
        resolve();
      });
    });
    ok(await api(0, 'POST', `/webhooks/endpoints/${held.id}/test`, brand.key), 202);
    await arrived;
    ok(await api(1, 'POST', `/webhooks/endpoints/${held.id}/disable`, brand.key));
    const disabledAt = Date.now();
    release?.();
    await sleep(6 * retryMs + 500);
    expect(at(gonePath).filter((delivery) => delivery.at > deletedAt)).toEqual([]);
    expect(at(heldPath).filter((delivery) => delivery.at > disabledAt)).toEqual([]);
    ok(await api(0, 'GET', `/webhooks/endpoints/${gone.id}`, brand.key), 404);
    expect(ok(await api(0, 'GET', `/webhooks/endpoints/${held.id}`, brand.key)).status).toBe('disabled');
  }, 60_000);

  it('replay-all through both gateways at once re-sends each failed message once', async () => {
    const brand = await account('Replaying brand');
    const path = newPath();
    const hook = await endpoint(brand.key, path);
    answers.set(path, (_delivery, response) => response.writeHead(500).end());
    const since = new Date(Date.now() - 60_000).toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(ok(await api(i % 2, 'POST', `/webhooks/endpoints/${hook.id}/test`, brand.key), 202).id);
    await waitFor(
      'all four failed',
      async () => {
        const failed = ok(await api(0, 'GET', `/webhooks/endpoints/${hook.id}/messages?status=failed`, brand.key)).messages;
        return failed.length === ids.length ? true : undefined;
      },
      { timeoutMs: 40_000, intervalMs: 200 },
    );
    answers.set(path, (_delivery, response) => response.writeHead(204).end());
    const switchedAt = Date.now();
    const [a, b] = await Promise.all([
      api(0, 'POST', `/webhooks/endpoints/${hook.id}/replay`, brand.key, { since }),
      api(1, 'POST', `/webhooks/endpoints/${hook.id}/replay`, brand.key, { since }),
    ]);
    expect(a.status).toBe(202);
    expect(b.status).toBe(202);
    expect(a.body.replayed + b.body.replayed).toBe(ids.length);
    await waitFor(
      'all four delivered',
      async () => {
        const delivered = ok(await api(1, 'GET', `/webhooks/endpoints/${hook.id}/messages?status=delivered`, brand.key)).messages;
        return delivered.length === ids.length ? true : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 100 },
    );
    await sleep(1_000);
    const after = at(path).filter((delivery) => delivery.at >= switchedAt);
    const counts = Object.fromEntries(ids.map((id) => [id, after.filter((d) => d.headers['webhook-id'] === id).length]));
    expect(counts).toEqual(Object.fromEntries(ids.map((id) => [id, 1])));
  }, 90_000);

  it('another tenant’s endpoint and message ids, and another environment’s, are 404 on every webhook route through either gateway; nothing changes', async () => {
    const owner = await account('Owner of the endpoint');
    const intruder = await account('Intruder');
    const path = newPath();
    const hook = await endpoint(owner.key, path);
    const queued = ok(await api(0, 'POST', `/webhooks/endpoints/${hook.id}/test`, owner.key), 202);
    await waitFor('delivered', async () => at(path).find((d) => d.headers['webhook-id'] === queued.id), { timeoutMs: 10_000 });
    const own = await endpoint(intruder.key, newPath());
    const routes = (id: string, messageId: string): Array<[string, string, unknown?]> => [
      ['GET', `/webhooks/endpoints/${id}`],
      ['PATCH', `/webhooks/endpoints/${id}`, { url: hookUrl('/stolen') }],
      ['POST', `/webhooks/endpoints/${id}/disable`],
      ['POST', `/webhooks/endpoints/${id}/rotate-secret`],
      ['POST', `/webhooks/endpoints/${id}/test`],
      ['GET', `/webhooks/endpoints/${id}/messages`],
      ['GET', `/webhooks/endpoints/${id}/messages/${messageId}/attempts`],
      ['POST', `/webhooks/endpoints/${id}/messages/${messageId}/replay`],
      ['POST', `/webhooks/endpoints/${id}/replay`, { since: new Date(Date.now() - 3_600_000).toISOString() }],
      ['DELETE', `/webhooks/endpoints/${id}`],
    ];
    const wrong: string[] = [];
    for (const gateway of [0, 1]) {
      for (const key of [intruder.key, intruder.testKey, owner.testKey]) {
        for (const [method, route, body] of routes(hook.id, queued.id)) {
          const answer = await api(gateway, method, route, key, body);
          if (answer.status !== 404) wrong.push(`${gateway} ${method} ${route}: ${answer.status}`);
        }
      }
      // The intruder's own endpoint with the owner's message id.
      for (const [method, route, body] of routes(own.id, queued.id).slice(6, 8)) {
        const answer = await api(gateway, method, route, intruder.key, body);
        if (answer.status !== 404) wrong.push(`${gateway} own ${method} ${route}: ${answer.status}`);
      }
    }
    expect(wrong).toEqual([]);
    const still = ok(await api(1, 'GET', `/webhooks/endpoints/${hook.id}`, owner.key));
    expect(still).toMatchObject({ status: 'enabled', url: hookUrl(path), previousSecretExpiresAt: null });
    const next = ok(await api(1, 'POST', `/webhooks/endpoints/${hook.id}/test`, owner.key), 202);
    const delivery = await waitFor('delivered', async () => at(path).find((d) => d.headers['webhook-id'] === next.id), {
      timeoutMs: 10_000,
    });
    expect(v1Count(delivery)).toBe(1);
    expect(v1Verifies(hook.secret, delivery)).toBe(true);
  }, 90_000);

  it('a receiver that holds the connection open: the attempt ends at the timeout, and another tenant’s message goes meanwhile', async () => {
    const slow = await account('Silent receiver');
    const quick = await account('Quick receiver');
    const slowPath = newPath();
    const quickPath = newPath();
    const slowHook = await endpoint(slow.key, slowPath);
    const quickHook = await endpoint(quick.key, quickPath);
    const closedAfter: number[] = [];
    answers.set(slowPath, (delivery, response) => {
      // Headers' first bytes, then nothing: the status line never completes.
      response.socket?.write('HTTP/1.1 200');
      delivery.request.socket.once('close', () => closedAfter.push(Date.now() - delivery.at));
    });
    const slowIds: string[] = [];
    for (let i = 0; i < 3; i++)
      slowIds.push(ok(await api(i % 2, 'POST', `/webhooks/endpoints/${slowHook.id}/test`, slow.key), 202).id);
    await waitFor('the silent receiver holding', async () => (at(slowPath).length >= 2 ? true : undefined), { timeoutMs: 5_000 });
    const sentAt = Date.now();
    const queued = ok(await api(1, 'POST', `/webhooks/endpoints/${quickHook.id}/test`, quick.key), 202);
    const delivered = await waitFor(
      'the other tenant’s message',
      async () => at(quickPath).find((d) => d.headers['webhook-id'] === queued.id),
      {
        timeoutMs: 5_000,
        intervalMs: 10,
      },
    );
    expect(delivered.at - sentAt).toBeLessThan(1_500);
    const attempt = await waitFor(
      'the held attempt recorded',
      async () => {
        for (const id of slowIds) {
          const listed = ok(await api(0, 'GET', `/webhooks/endpoints/${slowHook.id}/messages/${id}/attempts`, slow.key)).attempts;
          if (listed.length > 0) return listed[0] as Json;
        }
        return undefined;
      },
      { timeoutMs: timeoutMs + 5_000, intervalMs: 100 },
    );
    expect(attempt).toMatchObject({ status: 'failed', responseCode: null, error: `timed out after ${timeoutMs} ms` });
    expect(attempt.durationMs).toBeGreaterThanOrEqual(timeoutMs - 50);
    expect(attempt.durationMs).toBeLessThan(timeoutMs + 1_000);
    expect(Math.min(...closedAfter)).toBeLessThan(timeoutMs + 1_000);
    ok(await api(0, 'POST', `/webhooks/endpoints/${slowHook.id}/disable`, slow.key));
  }, 60_000);

  it('the replica sending a message killed mid-delivery: the other delivers it with the same webhook-id, once, and it is not lost', async () => {
    const brand = await account('Brand of a killed replica');
    const path = newPath();
    const hook = await endpoint(brand.key, path);
    let first: Delivery | undefined;
    const arrived = new Promise<void>((resolve) => {
      answers.set(path, (delivery, response) => {
        if (!first) {
          first = delivery;
          resolve();
          return; // never answered: its sender dies waiting
        }
        response.writeHead(204).end();
      });
    });
    const queued = ok(await api(0, 'POST', `/webhooks/endpoints/${hook.id}/test`, brand.key), 202);
    await arrived;
    const sender = await senderOf(first as Delivery);
    expect(sender, 'the replica holding the connection').toMatch(/^compliance-service-[12]$/);
    await product.kill(sender as string);
    const killedAt = Date.now();
    try {
      const delivered = await waitFor(
        'delivered by the surviving replica',
        async () => {
          const { messages } = ok(await api(1, 'GET', `/webhooks/endpoints/${hook.id}/messages?status=delivered`, brand.key));
          return messages.find((message: Json) => message.id === queued.id);
        },
        { timeoutMs: 20_000, intervalMs: 100 },
      );
      await sleep(1_500);
      const sent = at(path).filter((delivery) => delivery.headers['webhook-id'] === queued.id);
      expect(sent).toHaveLength(2);
      expect((sent[1] as Delivery).at - killedAt).toBeLessThan(3_000 + 2_000);
      expect(delivered.attempts).toBe(1);
      expect(v1Verifies(hook.secret, sent[1] as Delivery)).toBe(true);
    } finally {
      await product.restart(sender as string);
    }
  }, 60_000);
});
