import { createPublicKey, randomBytes, verify as verifySignature } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSigningKeyring, migrateAccounts, provisionAccount } from '@hallmark/accounts';
import type { Principal } from '@hallmark/contracts';
import { ed25519Jwk } from '@hallmark/crypto';
import { createSqlEventStore, type EventStore } from '@hallmark/event-store';
import { appendToAssetHistory, startAssetHistory } from '@hallmark/provenance';
import { createLogger } from '@hallmark/runtime';
import { createPostgresDatabase, createTestDatabase, type SqlDatabase } from '@hallmark/sql';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateCompliance } from '../store/merkle-store.ts';
import { createWebhookEndpoints, type WebhookEndpoints } from './endpoints.ts';
import { sendHttp } from './http-sender.ts';
import { enqueueMessages, messageIdOf } from './outbox.ts';
import { checkKeyExpiry, projectEventsToOutbox, recordQuotaThreshold, sweepWebhooks } from './sources.ts';
import { type DeliveryDeps, type DeliverySettings, startDeliveryWorker } from './worker.ts';

let db: SqlDatabase;
let store: EventStore;
let drop: () => Promise<void>;
let owner: Principal;
let keyring: ReturnType<typeof createSigningKeyring>;
let endpoints: WebhookEndpoints;
const masterKey = randomBytes(32);
const log = createLogger({ service: 'webhooks-test', instance: 'test', level: 'silent' });
let wakeAll = () => {};

interface Received {
  headers: IncomingMessage['headers'];
  body: string;
  at: number;
}

/** A loopback receiver whose answer each test decides. */
async function receiver(answer: (request: Received, n: number, response: ServerResponse) => void) {
  const received: Received[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry = { headers: request.headers, body: Buffer.concat(chunks).toString(), at: Date.now() };
      received.push(entry);
      answer(entry, received.length, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const settings: DeliverySettings = {
  scheduleMs: [50, 50, 50],
  timeoutMs: 300,
  leaseMs: 2_000,
  pollMs: 20,
  concurrency: 16,
  maxPerEndpoint: 2,
  maxPerAccount: 4,
  disableAfterMs: 5 * 86_400_000,
  allowPrivate: true,
};

function worker(
  overrides: Partial<DeliverySettings> = {},
  clock = () => new Date(),
  network: Partial<Pick<DeliveryDeps, 'lookup' | 'send'>> = {},
) {
  return startDeliveryWorker({
    db,
    masterKey,
    clock,
    log,
    settings: { ...settings, ...overrides },
    signerOf: async (principal) => {
      const key = await keyring.activeSigningKey(principal);
      return { kid: key.kid, sign: (content) => key.sign(content) };
    },
    lookup: async () => {
      throw new Error('no DNS in this test');
    },
    send: sendHttp,
    ...network,
  });
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

let causes = 0;
async function emit(type: 'scan.suspicious' | 'transfer.completed' = 'scan.suspicious') {
  causes += 1;
  await enqueueMessages(db, [
    { ...owner, type, cause: `test-cause-${causes}-${randomBytes(4).toString('hex')}`, at: new Date(), data: { n: causes } },
  ]);
  wakeAll();
}

beforeAll(async () => {
  const test = await createTestDatabase('webhooks');
  db = createPostgresDatabase({ connectionString: test.url, applicationName: 'test-webhooks' });
  drop = async () => {
    await db.close();
    await test.drop();
  };
  store = await createSqlEventStore(db, { pollIntervalMs: 20 });
  await migrateAccounts(db);
  await migrateCompliance(db);
  const account = await provisionAccount(
    { db, eventStore: store },
    { name: 'Hooks', tier: 'enterprise', environment: 'live' },
    new Date(),
  );
  owner = { accountId: account.account.id, environment: 'live' };
  keyring = createSigningKeyring(db, masterKey);
  endpoints = createWebhookEndpoints({ db, masterKey, clock: () => new Date(), rotationGraceMs: 60_000, wake: () => wakeAll() });
});

afterAll(async () => {
  await drop?.();
});

describe('webhook delivery on PostgreSQL', () => {
  it('signs v1 so the standardwebhooks library verifies it, and v1a under the account key; both secrets during a rotation', async () => {
    const hook = await receiver((_request, _n, response) => response.writeHead(204).end());
    const endpoint = await endpoints.create(owner, { url: hook.url, eventTypes: ['scan.suspicious'], description: 'sig' });
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(JSON.stringify(await endpoints.get(owner, endpoint.id))).not.toContain(endpoint.secret);
    const running = worker();
    wakeAll = () => running.wake();
    try {
      await emit();
      const first = await until('a delivery', () => hook.received[0]);
      const payload = new Webhook(endpoint.secret).verify(first.body, first.headers as Record<string, string>);
      expect(payload).toMatchObject({ type: 'scan.suspicious', environment: 'live' });
      expect(() =>
        new Webhook(`whsec_${randomBytes(32).toString('base64')}`).verify(first.body, first.headers as Record<string, string>),
      ).toThrow();
      // v1a: Ed25519 over the same content, under the key published in the JWKS (by kid).
      const key = await keyring.activeSigningKey(owner);
      expect(first.headers['webhook-key-id']).toBe(key.kid);
      const v1a = String(first.headers['webhook-signature'])
        .split(' ')
        .find((part) => part.startsWith('v1a,'))
        ?.slice(4);
      const content = `${first.headers['webhook-id']}.${first.headers['webhook-timestamp']}.${first.body}`;
      const publicKey = createPublicKey({ key: { ...ed25519Jwk(key.publicKey, key.kid) }, format: 'jwk' });
      expect(verifySignature(null, Buffer.from(content), publicKey, Buffer.from(v1a ?? '', 'base64'))).toBe(true);
      expect(verifySignature(null, Buffer.from(`${content}x`), publicKey, Buffer.from(v1a ?? '', 'base64'))).toBe(false);

      const rotated = await endpoints.rotate(owner, endpoint.id);
      await emit();
      const second = await until('a delivery after rotation', () => hook.received[1]);
      expect(
        String(second.headers['webhook-signature'])
          .split(' ')
          .filter((part) => part.startsWith('v1,')),
      ).toHaveLength(2);
      new Webhook(rotated.secret).verify(second.body, second.headers as Record<string, string>);
      new Webhook(endpoint.secret).verify(second.body, second.headers as Record<string, string>);
    } finally {
      await running.stop();
      await endpoints.remove(owner, endpoint.id);
      await hook.close();
    }
  });

  it('runs one keyed rotation once however many of its runs arrive at once: the secret in use stays valid', async () => {
    const hook = await receiver((_request, _n, response) => response.writeHead(204).end());
    const endpoint = await endpoints.create(owner, { url: hook.url, eventTypes: ['scan.suspicious'] });
    const running = worker();
    wakeAll = () => running.wake();
    try {
      // A retry after a timeout while the first run still works: each run found the new secret
      // missing, and the later one made the new secret the previous one too, dropping at once the
      // secret the receiver still used (a review of 2026-12-05).
      const requestKey = randomBytes(32).toString('hex');
      const runs = await Promise.all(Array.from({ length: 4 }, () => endpoints.rotate(owner, endpoint.id, requestKey)));
      expect(new Set(runs.map((run) => run.secret)).size).toBe(1);
      await emit();
      const delivered = await until('a delivery after the rotation', () => hook.received[0]);
      const headers = delivered.headers as Record<string, string>;
      new Webhook((runs[0] as { secret: string }).secret).verify(delivered.body, headers);
      new Webhook(endpoint.secret).verify(delivered.body, headers);
      // Two rotations of their own at once: one rotates, the other is told to rotate again.
      const [a, b] = await Promise.allSettled([endpoints.rotate(owner, endpoint.id), endpoints.rotate(owner, endpoint.id)]);
      const outcomes = [a, b].map((outcome) =>
        outcome.status === 'fulfilled' ? 'rotated' : (outcome.reason as { code: string }).code,
      );
      expect(outcomes.filter((outcome) => outcome === 'rotated').length).toBeGreaterThanOrEqual(1);
      for (const outcome of outcomes) expect(['rotated', 'CONFLICT']).toContain(outcome);
    } finally {
      await running.stop();
      await endpoints.remove(owner, endpoint.id);
      await hook.close();
    }
  });

  it('retries a failing and a timing-out receiver on the schedule with the same webhook-id, listing every attempt', async () => {
    const hook = await receiver((_request, n, response) => {
      if (n === 1) response.writeHead(500).end('no');
      else if (n === 2)
        setTimeout(() => response.writeHead(200).end(), 1_000); // past the 300 ms timeout
      else response.writeHead(200).end();
    });
    const endpoint = await endpoints.create(owner, { url: hook.url, eventTypes: ['scan.suspicious'] });
    const running = worker();
    wakeAll = () => running.wake();
    try {
      await emit();
      const message = await until('delivered', async () => {
        const page = await endpoints.messages(owner, endpoint.id, { status: 'delivered' });
        return page.messages[0];
      });
      expect(message.attempts).toBe(3);
      expect(message.lastResponseCode).toBe(200);
      expect(new Set(hook.received.map((request) => request.headers['webhook-id']))).toEqual(new Set([message.id]));
      const { attempts } = await endpoints.attempts(owner, endpoint.id, message.id);
      expect(attempts.map((attempt) => [attempt.status, attempt.responseCode])).toEqual([
        ['failed', 500],
        ['failed', null],
        ['succeeded', 200],
      ]);
      expect(attempts[1]?.error).toMatch(/timed out/);
    } finally {
      await running.stop();
      await endpoints.remove(owner, endpoint.id);
      await hook.close();
    }
  });

  it('waits out a 429’s Retry-After; a 410 disables the endpoint and tells the owner’s other endpoint', async () => {
    const limited = await receiver((_request, n, response) => {
      if (n === 1) response.writeHead(429, { 'retry-after': '1' }).end();
      else response.writeHead(200).end();
    });
    const gone = await receiver((_request, _n, response) => response.writeHead(410).end());
    const watcher = await receiver((_request, _n, response) => response.writeHead(200).end());
    const a = await endpoints.create(owner, { url: limited.url, eventTypes: ['transfer.completed'] });
    const b = await endpoints.create(owner, { url: gone.url, eventTypes: ['transfer.completed'] });
    const c = await endpoints.create(owner, { url: watcher.url, eventTypes: ['endpoint.disabled'] });
    const running = worker();
    wakeAll = () => running.wake();
    try {
      await emit('transfer.completed');
      await until('the retry after 429', () => limited.received[1]);
      const gap = (limited.received[1]?.at ?? 0) - (limited.received[0]?.at ?? 0);
      expect(gap).toBeGreaterThanOrEqual(950); // not the 50 ms schedule: Retry-After says 1 s
      const notice = await until('endpoint.disabled', () => watcher.received[0]);
      expect(JSON.parse(notice.body)).toMatchObject({ type: 'endpoint.disabled', data: { endpointId: b.id, reason: 'gone' } });
      expect(await endpoints.get(owner, b.id)).toMatchObject({ status: 'disabled', disabledReason: 'gone' });
      expect(gone.received).toHaveLength(1);
    } finally {
      await running.stop();
      for (const endpoint of [a, b, c]) await endpoints.remove(owner, endpoint.id);
      await Promise.all([limited.close(), gone.close(), watcher.close()]);
    }
  });

  it('disables an endpoint failing for the configured time, and replays its failed messages on request', async () => {
    const hook = await receiver((_request, _n, response) => response.writeHead(503).end());
    const endpoint = await endpoints.create(owner, { url: hook.url, eventTypes: ['scan.suspicious'] });
    const watcher = await receiver((_request, _n, response) => response.writeHead(200).end());
    const watching = await endpoints.create(owner, { url: watcher.url, eventTypes: ['endpoint.disabled'] });
    const running = worker({ scheduleMs: [20], disableAfterMs: 100_000 });
    wakeAll = () => running.wake();
    try {
      await emit();
      await until('failed', async () => {
        const page = await endpoints.messages(owner, endpoint.id, { status: 'failed' });
        return page.messages[0];
      });
      expect((await endpoints.get(owner, endpoint.id)).status).toBe('enabled');
      const replayed = await endpoints.replayFailed(owner, endpoint.id, { since: new Date(Date.now() - 60_000).toISOString() });
      expect(replayed.replayed).toBe(1);
      await until('two more attempts', () => hook.received[3]);
      await running.stop();
      // Five days later (the clock moved), the next failure disables it.
      const later = worker({ scheduleMs: [20], disableAfterMs: 100_000 }, () => new Date(Date.now() + 200_000));
      wakeAll = () => later.wake();
      await emit();
      await until('disabled', async () => ((await endpoints.get(owner, endpoint.id)).status === 'disabled' ? true : undefined));
      expect((await endpoints.get(owner, endpoint.id)).disabledReason).toBe('failing');
      // The owner is told, at its endpoint that takes endpoint.disabled.
      const notice = await until('endpoint.disabled', () => watcher.received[0]);
      expect(JSON.parse(notice.body)).toMatchObject({
        type: 'endpoint.disabled',
        data: { endpointId: endpoint.id, reason: 'failing' },
      });
      await later.stop();
    } finally {
      await running.stop();
      await endpoints.remove(owner, endpoint.id);
      await endpoints.remove(owner, watching.id);
      await Promise.all([hook.close(), watcher.close()]);
    }
  });

  it('the running worker refuses, after DNS, a name that resolves to a private address: no connection, the attempt failed', async () => {
    const endpoint = await endpoints.create(owner, { url: 'https://hooks.example.com/in', eventTypes: ['scan.suspicious'] });
    const asked: string[] = [];
    const running = worker({ allowPrivate: false, scheduleMs: [] }, undefined, {
      // The name resolves to the cloud metadata address (a DNS answer an attacker controls).
      lookup: async (hostname) => {
        asked.push(hostname);
        return [{ address: '169.254.169.254', family: 4 }];
      },
      send: () => {
        throw new Error('SSRF test: a connection was attempted');
      },
    });
    wakeAll = () => running.wake();
    try {
      await emit();
      const attempt = await until('the refused attempt', async () => {
        const { messages } = await endpoints.messages(owner, endpoint.id, {});
        const message = messages[0];
        if (!message) return undefined;
        return (await endpoints.attempts(owner, endpoint.id, message.id)).attempts[0];
      });
      expect(asked).toContain('hooks.example.com');
      expect(attempt).toMatchObject({ status: 'failed', responseCode: null });
      // Refused, without naming the address to the endpoint's owner (the operator's log has it).
      expect(attempt.error).toMatch(/^refused: /);
      expect(attempt.error).not.toMatch(/169\.254/);
      expect(attempt.error).not.toMatch(/a connection was attempted/);
    } finally {
      await running.stop();
      await endpoints.remove(owner, endpoint.id);
    }
  });

  it('two workers deliver 40 messages once each (row claims with SKIP LOCKED)', async () => {
    const hook = await receiver((_request, _n, response) => response.writeHead(200).end());
    const endpoint = await endpoints.create(owner, { url: hook.url, eventTypes: ['scan.suspicious'] });
    // A lease longer than any delivery on a loaded machine: this is about claims, not a lapsed lease (redelivered by design).
    const workers = [worker({ leaseMs: 15_000 }), worker({ leaseMs: 15_000 })];
    wakeAll = () => {
      for (const each of workers) each.wake();
    };
    try {
      for (let i = 0; i < 40; i += 1) await emit();
      await until('40 deliveries', () => (hook.received.length >= 40 ? true : undefined));
      await new Promise((resolve) => setTimeout(resolve, 200));
      const ids = hook.received.map((request) => request.headers['webhook-id']);
      expect(ids).toHaveLength(40);
      expect(new Set(ids).size).toBe(40);
    } finally {
      for (const each of workers) await each.stop();
      await endpoints.remove(owner, endpoint.id);
      await hook.close();
    }
  });

  it('announces each quota threshold and each key expiry (7 days, then 1 day) once', async () => {
    const hook = await receiver((_request, _n, response) => response.writeHead(200).end());
    const endpoint = await endpoints.create(owner, { url: hook.url, eventTypes: ['quota.threshold', 'key.expiring'] });
    const types = async () =>
      (
        await db.query<{ event_type: string; payload: { data: Record<string, unknown> } }>(
          'SELECT event_type, payload FROM webhook_messages WHERE endpoint_id = $1 ORDER BY created_at',
          [endpoint.id],
        )
      ).map((row) => `${row.event_type}:${row.payload.data.threshold ?? row.payload.data.daysLeft}`);
    try {
      const crossed = { quota: 'verify', threshold: 80 as const, used: 800, limit: 1000, day: '2026-11-25' };
      expect(await recordQuotaThreshold(db, owner, crossed, new Date())).toBe(true);
      expect(await recordQuotaThreshold(db, owner, crossed, new Date())).toBe(false);
      expect(await recordQuotaThreshold(db, owner, { ...crossed, threshold: 100, used: 1000 }, new Date())).toBe(true);
      expect(await types()).toEqual(['quota.threshold:80', 'quota.threshold:100']);

      const expiresAt = new Date(Date.now() + 3 * 86_400_000);
      await db.query(
        `INSERT INTO api_keys (id, account_id, environment, name, key_hash, prefix, scopes, expires_at)
         VALUES ('key_expiring', $1, 'live', 'CI', $2, 'svc_live_x', '{*}', $3)`,
        [owner.accountId, randomBytes(32).toString('hex'), expiresAt],
      );
      let now = new Date();
      const check = async () => {
        const running = checkKeyExpiry(db, log, { intervalMs: 60_000, clock: () => now, onWritten: () => {} });
        await running.stop();
      };
      await check();
      await check();
      expect((await types()).filter((type) => type.startsWith('key.'))).toEqual(['key.expiring:7']);
      now = new Date(expiresAt.getTime() - 12 * 3_600_000);
      await check();
      await check();
      expect((await types()).filter((type) => type.startsWith('key.'))).toEqual(['key.expiring:7', 'key.expiring:1']);
    } finally {
      await endpoints.remove(owner, endpoint.id);
      await hook.close();
    }
  });

  it('derives transfer.completed and transfer.locked from the event store, once each with two projection replicas', async () => {
    const hook = await receiver((_request, _n, response) => response.writeHead(200).end());
    const endpoint = await endpoints.create(owner, { url: hook.url, eventTypes: ['transfer.completed', 'transfer.locked'] });
    const replicas = [0, 1].map(() => projectEventsToOutbox(store, db, log, () => {}));
    try {
      const assetId = `obj_${randomBytes(6).toString('hex')}`;
      await store.startStreams([
        startAssetHistory(
          { assetId, owner },
          [{ type: 'registered', data: { serviceSerial: `S-${assetId}` } }],
          new Date().toISOString(),
        ),
      ]);
      await appendToAssetHistory(
        store,
        { assetId, owner },
        [{ type: 'sold', data: { transferId: 't1', fromOwnerId: 'a', toOwnerId: 'b', salePrice: 10, saleCurrency: 'EUR' } }],
        { now: () => new Date() },
      );
      await appendToAssetHistory(store, { assetId, owner }, [{ type: 'transfer_locked', data: { transferId: 't2' } }], {
        now: () => new Date(),
      });
      const rows = await until('both messages', async () => {
        const found = await db.query<{ event_type: string; payload: { data: Record<string, unknown> } }>(
          'SELECT event_type, payload FROM webhook_messages WHERE endpoint_id = $1 ORDER BY created_at',
          [endpoint.id],
        );
        return found.length >= 2 ? found : undefined;
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await endpoints.messages(owner, endpoint.id, {})).messages).toHaveLength(2);
      expect(rows.map((row) => row.event_type)).toEqual(['transfer.completed', 'transfer.locked']);
      expect(rows[0]?.payload.data).toMatchObject({ assetId, kind: 'sold', transferId: 't1', salePrice: 10 });
    } finally {
      for (const replica of replicas) await replica.stop();
      await endpoints.remove(owner, endpoint.id);
      await hook.close();
    }
  });

  it('sweeps delivered and failed messages past the retention, never pending ones', async () => {
    const endpoint = await endpoints.create(owner, { url: 'http://127.0.0.1:9/x', eventTypes: ['scan.counterfeit'] });
    try {
      const old = new Date(Date.now() - 31 * 86_400_000);
      for (const cause of ['old-delivered', 'old-pending', 'new-delivered']) {
        await enqueueMessages(db, [
          { ...owner, type: 'scan.counterfeit', cause, at: cause.startsWith('old') ? old : new Date(), data: {} },
        ]);
      }
      await db.query(`UPDATE webhook_messages SET status = 'delivered' WHERE endpoint_id = $1 AND message_id = ANY($2)`, [
        endpoint.id,
        [messageIdOf('old-delivered'), messageIdOf('new-delivered')],
      ]);
      const sweep = sweepWebhooks(db, log, { intervalMs: 60_000, retentionDays: 30, clock: () => new Date() });
      await sweep.stop();
      const left = await db.query<{ message_id: string }>('SELECT message_id FROM webhook_messages WHERE endpoint_id = $1', [
        endpoint.id,
      ]);
      expect(left.map((row) => row.message_id).sort()).toEqual([messageIdOf('old-pending'), messageIdOf('new-delivered')].sort());
    } finally {
      await endpoints.remove(owner, endpoint.id);
    }
  });

  it('an account whose endpoints never answer holds 2 deliveries per endpoint and 4 in all; another account’s message goes at once', async () => {
    const silent = await receiver(() => {}); // accepts, never answers: each attempt ends at the timeout
    const fast = await receiver((_request, _n, response) => response.writeHead(200).end());
    const other = await provisionAccount(
      { db, eventStore: store },
      { name: 'Hooks, another', tier: 'enterprise', environment: 'live' },
      new Date(),
    );
    const otherOwner: Principal = { accountId: other.account.id, environment: 'live' };
    const stalled = await Promise.all(
      ['a', 'b', 'c'].map((path) => endpoints.create(owner, { url: `${silent.url}/${path}`, eventTypes: ['scan.suspicious'] })),
    );
    const theirs = await endpoints.create(otherOwner, { url: fast.url, eventTypes: ['scan.counterfeit'] });
    const running = worker({ timeoutMs: 5_000, leaseMs: 8_000 });
    wakeAll = () => running.wake();
    try {
      for (let i = 0; i < 10; i += 1) await emit(); // 30 messages due now, 10 per endpoint
      await until('4 deliveries in flight', () => (silent.received.length >= 4 ? true : undefined));
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Without the caps: 16 (every slot of the worker) at once.
      expect(silent.received).toHaveLength(4);
      const inFlight = await db.query<{ endpoint_id: string; n: string }>(
        `SELECT endpoint_id, count(*) AS n FROM webhook_messages
          WHERE account_id = $1 AND status = 'pending' AND lease_until > now() GROUP BY endpoint_id`,
        [owner.accountId],
      );
      expect(inFlight.reduce((sum, row) => sum + Number(row.n), 0)).toBe(4);
      for (const row of inFlight) expect(Number(row.n)).toBeLessThanOrEqual(2);
      const sentAt = Date.now();
      await enqueueMessages(db, [
        { ...otherOwner, type: 'scan.counterfeit', cause: `other-${randomBytes(4).toString('hex')}`, at: new Date(), data: {} },
      ]);
      running.wake();
      const delivered = await until('the other account’s delivery', () => fast.received[0], 2_500);
      expect(delivered.at - sentAt).toBeLessThan(1_000);
    } finally {
      await Promise.all([silent.close(), fast.close()]);
      await running.stop();
      for (const endpoint of stalled) await endpoints.remove(owner, endpoint.id);
      await endpoints.remove(otherOwner, theirs.id);
    }
  });

  it('after a failed attempt the endpoint’s other messages wait its backoff, rather than each failing at once', async () => {
    const failing = await receiver((_request, _n, response) => response.writeHead(500).end());
    const endpoint = await endpoints.create(owner, { url: failing.url, eventTypes: ['scan.suspicious'] });
    const running = worker({ scheduleMs: [1_500, 1_500] });
    wakeAll = () => running.wake();
    try {
      for (let i = 0; i < 10; i += 1) await emit();
      await until('a first failure', () => failing.received[0]);
      await new Promise((resolve) => setTimeout(resolve, 700));
      // The first attempts in flight (2 at most) failed; the 8 others wait for the endpoint's 1.5 s.
      expect(failing.received.length).toBeLessThanOrEqual(2);
      const [row] = await db.query<{ failure_streak: number; held_until: Date | null }>(
        'SELECT failure_streak, held_until FROM webhook_endpoints WHERE endpoint_id = $1',
        [endpoint.id],
      );
      // The attempts that failed together count as one failure in a row: the hold is the schedule's first step.
      expect(row?.failure_streak).toBe(1);
      expect(row?.held_until).not.toBeNull();
      // A test asked for now ends the hold: the endpoint is tried again at once (its oldest messages first).
      const before = failing.received.length;
      await endpoints.test(owner, endpoint.id);
      await until('an attempt after the test', () => (failing.received.length > before ? true : undefined), 1_000);
      // A new URL (the owner fixed it) ends the hold and the failures in a row; the same URL does not.
      const heldOf = async () =>
        (
          await db.query<{ failure_streak: number; held_until: Date | null }>(
            'SELECT failure_streak, held_until FROM webhook_endpoints WHERE endpoint_id = $1',
            [endpoint.id],
          )
        )[0];
      await until('a hold again', async () => ((await heldOf())?.held_until ? true : undefined), 2_000);
      await endpoints.update(owner, endpoint.id, { url: failing.url });
      expect((await heldOf())?.held_until).not.toBeNull();
      const fixed = await receiver((_request, _n, response) => response.writeHead(204).end());
      try {
        await endpoints.update(owner, endpoint.id, { url: fixed.url });
        expect(await heldOf()).toMatchObject({ failure_streak: 0, held_until: null });
        await until('a delivery at the fixed URL', () => fixed.received[0], 2_000);
      } finally {
        await fixed.close();
      }
    } finally {
      await running.stop();
      await endpoints.remove(owner, endpoint.id);
      await failing.close();
    }
  });

  it('a receiver that hangs holds one delivery slot, not the others', async () => {
    const slow = await receiver(() => {}); // never answers: the attempt ends at the timeout
    const fast = await receiver((_request, _n, response) => response.writeHead(200).end());
    const a = await endpoints.create(owner, { url: slow.url, eventTypes: ['scan.suspicious'] });
    const b = await endpoints.create(owner, { url: fast.url, eventTypes: ['transfer.completed'] });
    const running = worker({ timeoutMs: 3_000, leaseMs: 5_000 });
    wakeAll = () => running.wake();
    try {
      await emit('scan.suspicious');
      await until('the slow request', () => slow.received[0]);
      const sentAt = Date.now();
      await emit('transfer.completed');
      const delivered = await until('the fast delivery', () => fast.received[0], 2_500);
      expect(delivered.at - sentAt).toBeLessThan(1_000);
    } finally {
      await Promise.all([slow.close(), fast.close()]);
      await running.stop();
      for (const endpoint of [a, b]) await endpoints.remove(owner, endpoint.id);
    }
  });
});
