// Fair delivery counts real deliveries (docs/WEBHOOKS.md, "Fair delivery"): a replay clears a
// message's lease and deleting an endpoint removes its messages while their attempts still run;
// those attempts keep their places until they end, and their outcomes change neither the message
// nor the endpoint's failures. The connection is a stub that holds each attempt until the test
// settles it: nothing connects anywhere.
import { randomBytes } from 'node:crypto';
import { createSigningKeyring, migrateAccounts, provisionAccount } from '@hallmark/accounts';
import type { Principal } from '@hallmark/contracts';
import { createSqlEventStore } from '@hallmark/event-store';
import { createLogger } from '@hallmark/runtime';
import { createPostgresDatabase, createTestDatabase, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateCompliance } from '../store/merkle-store.ts';
import { createWebhookEndpoints, type WebhookEndpoints } from './endpoints.ts';
import type { Send, SendResult } from './http-sender.ts';
import { type DeliverySettings, startDeliveryWorker } from './worker.ts';

let db: SqlDatabase;
let drop: () => Promise<void>;
let owner: Principal;
let keyring: ReturnType<typeof createSigningKeyring>;
let endpoints: WebhookEndpoints;
const masterKey = randomBytes(32);
const log = createLogger({ service: 'webhooks-in-flight-test', instance: 'test', level: 'silent' });
let wakeAll = () => {};

/** Attempts as they start, each waiting for the test to give its answer. */
function heldSends() {
  const held: Array<{ messageId: string; answer: (result: SendResult) => void }> = [];
  const send: Send = (_target, headers) =>
    new Promise((resolve) => held.push({ messageId: String(headers['webhook-id']), answer: resolve }));
  return { held, send };
}

const settings: DeliverySettings = {
  scheduleMs: [60_000, 60_000],
  timeoutMs: 10_000,
  leaseMs: 20_000,
  pollMs: 20,
  concurrency: 16,
  maxPerEndpoint: 2,
  maxPerAccount: 4,
  disableAfterMs: 5 * 86_400_000,
  allowPrivate: true,
};

function worker(send: Send, overrides: Partial<DeliverySettings> = {}) {
  return startDeliveryWorker({
    db,
    masterKey,
    clock: () => new Date(),
    log,
    settings: { ...settings, ...overrides },
    signerOf: async (principal) => {
      const key = await keyring.activeSigningKey(principal);
      return { kid: key.kid, sign: (content) => key.sign(content) };
    },
    lookup: async () => {
      throw new Error('no DNS in this test');
    },
    send,
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
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const inFlightOf = async (column: 'endpoint_id' | 'account_id', id: string) =>
  Number(
    (
      await db.query<{ n: string | number }>(`SELECT count(*) AS n FROM webhook_deliveries_in_flight WHERE ${column} = $1`, [id])
    )[0]?.n ?? 0,
  );

const endpointRow = async (id: string) =>
  (
    await db.query<{ failure_streak: number; held_until: Date | null; failing_since: Date | null }>(
      'SELECT failure_streak, held_until, failing_since FROM webhook_endpoints WHERE endpoint_id = $1',
      [id],
    )
  )[0];

beforeAll(async () => {
  const test = await createTestDatabase('webhooks_in_flight');
  db = createPostgresDatabase({ connectionString: test.url, applicationName: 'test-webhooks-in-flight' });
  drop = async () => {
    await db.close();
    await test.drop();
  };
  const store = await createSqlEventStore(db, { pollIntervalMs: 20 });
  await migrateAccounts(db);
  await migrateCompliance(db);
  const account = await provisionAccount(
    { db, eventStore: store },
    { name: 'Hooks in flight', tier: 'enterprise', environment: 'live' },
    new Date(),
  );
  owner = { accountId: account.account.id, environment: 'live' };
  keyring = createSigningKeyring(db, masterKey);
  endpoints = createWebhookEndpoints({ db, masterKey, clock: () => new Date(), rotationGraceMs: 60_000, wake: () => wakeAll() });
});

afterAll(async () => {
  await drop?.();
});

describe('deliveries in flight', () => {
  it('a message replayed mid-delivery: the first attempt keeps its place, and its failure changes neither the message nor the endpoint', async () => {
    const { held, send } = heldSends();
    const endpoint = await endpoints.create(owner, { url: 'http://127.0.0.1:9/never', eventTypes: ['test'] });
    const running = worker(send);
    wakeAll = () => running.wake();
    try {
      const message = await endpoints.test(owner, endpoint.id);
      await until('the first attempt', () => held[0]);
      await endpoints.replay(owner, endpoint.id, message.id);
      // Sent again now, beside the first (the endpoint has room for 2), and both counted.
      await until('the replay’s attempt', () => held[1]);
      expect(held.map((each) => each.messageId)).toEqual([message.id, message.id]);
      expect(await inFlightOf('endpoint_id', endpoint.id)).toBe(2);
      // Replayed again: no room at the endpoint until an attempt ends, whatever the message's lease says.
      await endpoints.replay(owner, endpoint.id, message.id);
      await sleep(300);
      expect(held).toHaveLength(2);

      held[0]?.answer({ status: 500 });
      await until('the stale attempt on record', async () => {
        const { attempts } = await endpoints.attempts(owner, endpoint.id, message.id);
        return attempts.length === 1 ? attempts : undefined;
      });
      // The stale failure set no streak, no hold, no failing_since, and left the replay's schedule.
      expect(await endpointRow(endpoint.id)).toMatchObject({ failure_streak: 0, held_until: null, failing_since: null });
      const [pending] = (await endpoints.messages(owner, endpoint.id, {})).messages;
      expect(pending).toMatchObject({ id: message.id, status: 'pending', attempts: 0 });
      // Its place is free: the message, replayed meanwhile, goes again.
      await until('the next attempt', () => held[2]);

      // The current attempt's failure counts as before.
      held[2]?.answer({ status: 500 });
      await until('the failure on the endpoint', async () =>
        (await endpointRow(endpoint.id))?.failure_streak ? true : undefined,
      );
      expect((await endpointRow(endpoint.id))?.held_until).not.toBeNull();
      expect((await endpoints.messages(owner, endpoint.id, {})).messages[0]).toMatchObject({ attempts: 1, status: 'pending' });
    } finally {
      for (const each of held) each.answer({ status: 500 });
      await running.stop();
      await endpoints.remove(owner, endpoint.id);
    }
  });

  it('a deleted endpoint’s deliveries keep the account’s places until they end; this worker’s own slots count even without their rows', async () => {
    const { held, send } = heldSends();
    // 2 per account here, so the deleted endpoint's 2 fill it.
    const running = worker(send, { maxPerAccount: 2 });
    wakeAll = () => running.wake();
    const doomed = await endpoints.create(owner, { url: 'http://127.0.0.1:9/doomed', eventTypes: ['test'] });
    let again: Awaited<ReturnType<WebhookEndpoints['create']>> | undefined;
    try {
      await endpoints.test(owner, doomed.id);
      await endpoints.test(owner, doomed.id);
      await until('both attempts', () => held[1]);
      await endpoints.remove(owner, doomed.id);
      expect(await inFlightOf('account_id', owner.accountId)).toBe(2);

      again = await endpoints.create(owner, { url: 'http://127.0.0.1:9/again', eventTypes: ['test'] });
      await endpoints.test(owner, again.id);
      await sleep(300);
      expect(held).toHaveLength(2);
      // Rows gone (by hand here; a lease that lapsed on a stalled process): the slots still count.
      await db.query('DELETE FROM webhook_deliveries_in_flight WHERE account_id = $1', [owner.accountId]);
      running.wake();
      await sleep(300);
      expect(held).toHaveLength(2);

      // One ends (its message gone: nothing to record, no error); its place goes to the new endpoint.
      held[0]?.answer({ status: 500 });
      await until('the new endpoint’s attempt', () => held[2]);
      expect(await inFlightOf('account_id', owner.accountId)).toBe(1);
    } finally {
      for (const each of held) each.answer({ status: 500 });
      await running.stop();
      if (again) await endpoints.remove(owner, again.id);
    }
  });

  it('a failure that ends after another attempt succeeded starts a new failing spell: the endpoint that works is not disabled for the old one', async () => {
    const { held, send } = heldSends();
    const endpoint = await endpoints.create(owner, { url: 'http://127.0.0.1:9/recovering', eventTypes: ['test'] });
    // Failing for six days (the endpoint is disabled after five of failures and no success).
    const sixDaysAgo = new Date(Date.now() - 6 * 86_400_000);
    await db.query('UPDATE webhook_endpoints SET failing_since = $2 WHERE endpoint_id = $1', [endpoint.id, sixDaysAgo]);
    const running = worker(send);
    wakeAll = () => running.wake();
    try {
      // Two attempts at once, both begun while the endpoint was failing.
      await endpoints.test(owner, endpoint.id);
      await endpoints.test(owner, endpoint.id);
      await until('both attempts', () => held[1]);
      // The second one is answered first: the endpoint works again, its failing spell over.
      held[1]?.answer({ status: 204 });
      await until('the success on record', async () =>
        (await endpointRow(endpoint.id))?.failing_since === null ? true : undefined,
      );
      // Then the first fails: a new spell starting now, not the six-day one the attempt read at its start.
      held[0]?.answer({ status: 500 });
      const failed = await until('the failure on record', async () => {
        const row = await endpointRow(endpoint.id);
        return row && row.failure_streak > 0 ? row : undefined;
      });
      expect((await endpoints.get(owner, endpoint.id)).status).toBe('enabled');
      expect(Date.now() - new Date(failed.failing_since ?? 0).getTime()).toBeLessThan(60_000);
    } finally {
      for (const each of held) each.answer({ status: 500 });
      await running.stop();
      await endpoints.remove(owner, endpoint.id);
    }
  });

  it('an account’s places go first to the endpoint with the fewest in flight: two slow receivers with a backlog leave the brand’s own endpoint a place as soon as one frees', async () => {
    const { held, send } = heldSends();
    const running = worker(send);
    wakeAll = () => running.wake();
    // Two receivers that answer, slowly (a leaked key's endpoints and pings, or a slow partner), with
    // a backlog older than the brand's alert.
    const slow = [
      await endpoints.create(owner, { url: 'http://127.0.0.1:9/slow-a', eventTypes: ['test'] }),
      await endpoints.create(owner, { url: 'http://127.0.0.1:9/slow-b', eventTypes: ['test'] }),
    ];
    const brand = await endpoints.create(owner, { url: 'http://127.0.0.1:9/brand', eventTypes: ['test'] });
    try {
      for (let i = 0; i < 4; i++) for (const endpoint of slow) await endpoints.test(owner, endpoint.id);
      await until('the account’s 4 places taken', () => held[3]);
      const alert = await endpoints.test(owner, brand.id);
      await sleep(200);
      expect(held).toHaveLength(4);
      // One slow attempt ends (2xx): its place goes to the brand's endpoint, not to the slow one's next message.
      held[0]?.answer({ status: 204 });
      const next = await until('the next attempt', () => held[4]);
      expect(next.messageId).toBe(alert.id);
    } finally {
      for (const each of held) each.answer({ status: 204 });
      await running.stop();
      for (const endpoint of [...slow, brand]) await endpoints.remove(owner, endpoint.id);
    }
  });
});
