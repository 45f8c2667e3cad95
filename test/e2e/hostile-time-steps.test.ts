// Time, part two (a review of 2026-12-05): what a clock that steps BACK does to the parts of the
// product that keep time, over real HTTP against the embedded product with its movable clock
// (`t.clock.freeze(at)` to any moment, earlier ones included). test/e2e/hostile-time.test.ts covered
// key, transfer-code and printed-code expiry edges, UTC midnight, the host's time zone and a few
// backward steps; this file takes webhook retries and their endpoint hold, a webhook secret's
// rotation grace, `key.expiring`, console sessions' idle and absolute expiry, Idempotency-Keys' day,
// the limits' remembered refusals, and the signed checkpoints an auditor reads.
//
// The step of a clock: NTP (or an operator) correcting a host whose clock ran ahead. Nothing here
// asks the product to know the true time; each test asks that a window measured on the clock is
// measured from what happened on the clock, and that a step back neither hides anything for the
// length of the step nor brings back what already ended. Each test says what a careful user expects.
// Found and fixed (seven of ten failing before): webhook retries and endpoint holds stayed as far
// ahead as the step; a key living under a day got a 7-day notice beside its 1-day one; a session's
// idle expiry kept the step's hours, and a session answered as ended came back; a limit's refusal
// and an address's failed-authentication hold lasted the step; a larger tree's checkpoint was dated
// before a smaller one's.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { auditExport, type ComplianceExportDocument, type JsonWebKeySet } from '@hallmark/client';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call, startTestProduct, type TestProduct } from '../support/embedded.ts';
import { waitFor } from '../support/wait.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let t: TestProduct;
let operator: string;

const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(t.url, method, `/api/v1${path}`, options);
const at = (iso: string) => t.clock.freeze(new Date(iso));
const ms = (iso: string) => Date.parse(iso);
const iso = (time: number) => new Date(time).toISOString();
const sleep = (wait: number) => new Promise((resolve) => setTimeout(resolve, wait));

function expectError(response: ApiResponse, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error?.code, JSON.stringify(response.body)).toBe(code);
}

/** A client address of its own (the loopback proxy hop is trusted): failed authentications count per address. */
const fromAddress = () => `198.51.100.${1 + Math.floor(Math.random() * 254)}, 203.0.113.${1 + Math.floor(Math.random() * 254)}`;

async function tenant(tier: 'free' | 'starter' | 'enterprise', name: string) {
  const created = await api('POST', '/accounts', { key: operator, body: { name: `${name} ${Math.random()}`, tier } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { id: created.body.account.id as string, key: created.body.apiKey.secret as string };
}

/** A GTIN-14 with a valid GS1 check digit, from 13 digits. */
function gtinOf(first13: string): string {
  const sum = [...first13].reduce((acc, digit, index) => acc + Number(digit) * (index % 2 === 0 ? 3 : 1), 0);
  return `${first13}${(10 - (sum % 10)) % 10}`;
}
let gtinCounter = 0;
const freshGtin = () => gtinOf(`950600${String(8_200_000 + ++gtinCounter).padStart(7, '0')}`);

async function grant(accountId: string, gtin: string) {
  const granted = await api('POST', `/accounts/${accountId}/gtins`, { key: operator, body: { gtin } });
  expect(granted.status, JSON.stringify(granted.body)).toBe(201);
}

// One loopback receiver for every endpoint: each endpoint's URL has a path of its own, and the
// receiver answers each path with the status the test sets for it (204 unless told).
interface Delivery {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  json: Json;
}
const deliveries: Delivery[] = [];
const answerOf = new Map<string, number>();
const receiver = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const body = Buffer.concat(chunks).toString();
    const path = request.url ?? '';
    deliveries.push({ path, headers: request.headers, body, json: JSON.parse(body) as Json });
    response.writeHead(answerOf.get(path) ?? 204).end();
  });
});
let receiverOrigin: string;
const deliveredTo = (path: string) => deliveries.filter((delivery) => delivery.path === path);

async function endpointFor(key: string, path: string, eventTypes: string[]) {
  const created = await api('POST', '/webhooks/endpoints', { key, body: { url: `${receiverOrigin}${path}`, eventTypes } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { id: created.body.id as string, secret: created.body.secret as string };
}

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverOrigin = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  t = await startTestProduct({
    // Webhooks to the loopback receiver; key expiry looked at every 100 ms; deliveries looked for every 50 ms.
    HALLMARK_WEBHOOKS_ALLOW_PRIVATE: 'true',
    HALLMARK_WEBHOOK_CHECK_MS: '100',
    HALLMARK_WEBHOOK_POLL_MS: '50',
    HALLMARK_WEBHOOK_TIMEOUT_MS: '2000',
    HALLMARK_WEBHOOK_LEASE_MS: '5000',
    // Client addresses from X-Forwarded-For (the loopback hop is trusted), and few failed
    // authentications a minute so an address's hold comes quickly.
    HALLMARK_TRUST_PROXY: 'loopback',
    HALLMARK_AUTH_FAILURES_PER_MINUTE: '5',
    HALLMARK_PUBLIC_RATE_LIMIT: '1000',
  });
  operator = t.product.generatedOperatorKey as string;
}, 120_000);

afterEach(() => {
  t.clock.freeze(undefined);
});

afterAll(async () => {
  await t?.stop();
  receiver.closeAllConnections();
  receiver.close();
});

describe('webhook delivery when the clock steps back', () => {
  it('keeps delivering to an endpoint whose last attempt failed just before a 6-hour step back: its new messages and the 5 s retry', async () => {
    // docs/WEBHOOKS.md, "Delivery and retries": retries after a failure wait 5 s, 5 min, … 10 h
    // (never longer than 10 h, whatever Retry-After says), and an endpoint whose attempt failed is
    // held back for the schedule's step for its failures in a row: 5 s after one failure. A careful
    // user expects an endpoint that failed once to be tried again a few seconds later by the clock,
    // and new alerts to it to go then, whatever the clock said before. What the code does:
    // `next_attempt_at` and `held_until` are instants (failure + 5 s); once the clock steps back six
    // hours, both lie six hours ahead, and the claim (worker.ts, `held_until <= $1`) takes nothing of
    // the endpoint: a `key.expiring` (or a `scan.counterfeit`) written after the step waits out the
    // step too. A wait longer than the schedule's longest step can only be a clock that went back.
    const house = await tenant('enterprise', 'Hooks after a step');
    const path = `/held-${randomBytes(4).toString('hex')}`;
    const endpoint = await endpointFor(house.key, path, ['key.expiring']);

    // The clock runs six hours ahead; the receiver is down for a moment and answers 500.
    at('2032-03-10T12:00:00.000Z');
    answerOf.set(path, 500);
    const queued = await api('POST', `/webhooks/endpoints/${endpoint.id}/test`, { key: house.key });
    expect(queued.status, JSON.stringify(queued.body)).toBe(202);
    const testId = queued.body.id as string;
    const failed = await waitFor('the failed first attempt on record', async () => {
      const listed = await api('GET', `/webhooks/endpoints/${endpoint.id}/messages`, { key: house.key });
      const message = listed.body.messages?.find((each: Json) => each.id === testId);
      return message?.attempts === 1 ? message : undefined;
    });
    expect(failed).toMatchObject({ status: 'pending', lastResponseCode: 500, nextAttemptAt: '2032-03-10T12:00:05.000Z' });

    // The receiver is back; NTP steps the clock back to the true time, six hours earlier.
    answerOf.set(path, 204);
    at('2032-03-10T06:00:00.000Z');
    // A key made now with three days to live: its key.expiring is written at once (7 days' notice).
    const expiring = await api('POST', '/keys', {
      key: house.key,
      body: { name: 'deploy', scopes: ['assets:read'], expiresIn: '3d' },
    });
    expect(expiring.status, JSON.stringify(expiring.body)).toBe(201);
    const written = await waitFor('the key.expiring message written', async () => {
      const listed = await api('GET', `/webhooks/endpoints/${endpoint.id}/messages`, { key: house.key });
      return listed.body.messages?.find((each: Json) => each.eventType === 'key.expiring');
    });
    expect(written.createdAt).toBe('2032-03-10T06:00:00.000Z');
    // Ten seconds on by the clock: more than the 5 s the schedule asks after one failure. The worker
    // moves the hold back by the step it sees: seen only now (a loaded machine ran no look between
    // the two settings of the clock), the hold is 5 s from now, so ten seconds more are given then.
    const alertDelivered = (timeoutMs: number) =>
      waitFor(
        'the key.expiring written after the step, delivered',
        async () => deliveredTo(path).find((delivery) => delivery.json.type === 'key.expiring'),
        { timeoutMs },
      );
    at('2032-03-10T06:00:10.000Z');
    const alert = await alertDelivered(4_000)
      .catch(async () => {
        at('2032-03-10T06:00:20.000Z');
        return alertDelivered(6_000);
      })
      .catch(async () => {
        const shown = await api('GET', `/webhooks/endpoints/${endpoint.id}/messages`, { key: house.key });
        return `not delivered; the endpoint's messages: ${JSON.stringify(shown.body.messages?.map((each: Json) => [each.eventType, each.status, each.nextAttemptAt]))}`;
      });
    expect(typeof alert === 'string' ? alert : 'delivered').toBe('delivered');
    // And the failed test message is retried, not held until 12:00:05 by the clock (six hours).
    const retried = await waitFor(
      'the failed message retried',
      async () => {
        const sent = deliveredTo(path).filter((delivery) => delivery.headers['webhook-id'] === testId);
        return sent.length >= 2 ? sent : undefined;
      },
      { timeoutMs: 4_000 },
    ).catch(() => undefined);
    expect(retried?.length ?? 1, 'attempts of the test message received').toBeGreaterThanOrEqual(2);
  });

  it('signs with both secrets through a rotation’s grace across a step back, and with the new one alone from previousSecretExpiresAt', async () => {
    // docs/WEBHOOKS.md, rotate-secret: "For 24 h (previousSecretExpiresAt) every message carries a
    // v1 signature under each secret". A receiver that has not deployed the new secret yet must
    // keep verifying through the whole grace even when the clock steps back (a step back must not
    // cut it short), and the grace ends at the instant the rotation answered, by the clock.
    const house = await tenant('enterprise', 'Rotation grace');
    const path = `/rotating-${randomBytes(4).toString('hex')}`;
    const endpoint = await endpointFor(house.key, path, ['key.expiring']);
    at('2032-04-01T12:00:00.000Z');
    const rotated = await api('POST', `/webhooks/endpoints/${endpoint.id}/rotate-secret`, { key: house.key });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    expect(rotated.body.previousSecretExpiresAt).toBe('2032-04-02T12:00:00.000Z');
    const [oldSecret, newSecret] = [endpoint.secret, rotated.body.secret as string];

    /** Sends a test message and answers which of the two secrets verify its delivery. */
    const verifyingSecrets = async () => {
      const queued = await api('POST', `/webhooks/endpoints/${endpoint.id}/test`, { key: house.key });
      expect(queued.status, JSON.stringify(queued.body)).toBe(202);
      const delivery = await waitFor('the test message', async () =>
        deliveredTo(path).find((each) => each.headers['webhook-id'] === queued.body.id),
      );
      const headers = Object.fromEntries(Object.entries(delivery.headers).map(([name, value]) => [name, String(value)]));
      const verifies = (secret: string) => {
        try {
          new Webhook(secret).verify(delivery.body, headers);
          return true;
        } catch {
          return false;
        }
      };
      return { old: verifies(oldSecret), new: verifies(newSecret) };
    };

    at('2032-04-01T09:00:00.000Z'); // three hours back
    expect(await verifyingSecrets()).toEqual({ old: true, new: true });
    at('2032-04-02T11:59:59.999Z');
    expect(await verifyingSecrets()).toEqual({ old: true, new: true });
    at('2032-04-02T12:00:00.000Z');
    expect(await verifyingSecrets()).toEqual({ old: false, new: true });
    // The endpoint says the same.
    const shown = await api('GET', `/webhooks/endpoints/${endpoint.id}`, { key: house.key });
    expect(shown.body.previousSecretExpiresAt).toBe('2032-04-02T12:00:00.000Z');
  });
});

describe('key.expiring', () => {
  /** The (daysLeft, expiresAt) of every key.expiring message written for a key, oldest first. */
  const noticesOf = async (accountKey: string, endpointId: string, keyId: string) => {
    const listed = await api('GET', `/webhooks/endpoints/${endpointId}/messages?limit=100`, { key: accountKey });
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    return (listed.body.messages as Json[])
      .filter((message) => message.eventType === 'key.expiring' && message.payload.data.keyId === keyId)
      .reverse()
      .map((message) => ({ daysLeft: message.payload.data.daysLeft, expiresAt: message.payload.data.expiresAt }));
  };
  /** Long enough for several checks (every 100 ms here) to have run at the clock's present moment. */
  const severalChecks = () => sleep(700);

  it('warns once at 7 days and once at 1 day, not again when the clock steps back and forth, and never after the key expired', async () => {
    // docs/WEBHOOKS.md, catalogue: "An API key of the account expires within 7 days, and again
    // within 1 day (each once)", data { keyId, name, expiresAt, daysLeft (7/1) }. A clock that steps
    // back (the key then has more days again) and forward must not announce a threshold twice, and
    // a key that has expired is not "expiring".
    const house = await tenant('enterprise', 'Expiring keys');
    const endpoint = await endpointFor(house.key, `/expiring-${randomBytes(4).toString('hex')}`, ['key.expiring']);
    at('2032-07-01T00:00:00.000Z');
    const made = await api('POST', '/keys', { key: house.key, body: { name: 'ci', scopes: ['assets:read'], expiresIn: '3d' } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const expiresAt = '2032-07-04T00:00:00.000Z';
    expect(made.body.expiresAt).toBe(expiresAt);
    await waitFor('the 7-day notice', async () =>
      (await noticesOf(house.key, endpoint.id, made.body.id)).length > 0 ? true : undefined,
    );
    await severalChecks();
    expect(await noticesOf(house.key, endpoint.id, made.body.id)).toEqual([{ daysLeft: 7, expiresAt }]);

    // Two days back (five days left again), then forward past where it was: no second 7-day notice.
    at('2032-06-29T00:00:00.000Z');
    await severalChecks();
    at('2032-07-01T06:00:00.000Z');
    await severalChecks();
    expect(await noticesOf(house.key, endpoint.id, made.body.id)).toEqual([{ daysLeft: 7, expiresAt }]);

    // 23 hours left: the 1-day notice, once, also across a step back out of the last day and in again.
    at('2032-07-03T01:00:00.000Z');
    await waitFor('the 1-day notice', async () =>
      (await noticesOf(house.key, endpoint.id, made.body.id)).length === 2 ? true : undefined,
    );
    at('2032-07-02T18:00:00.000Z');
    await severalChecks();
    at('2032-07-03T23:00:00.000Z');
    await severalChecks();
    // Expired: nothing more.
    at('2032-07-04T00:00:00.000Z');
    await severalChecks();
    expect(await noticesOf(house.key, endpoint.id, made.body.id)).toEqual([
      { daysLeft: 7, expiresAt },
      { daysLeft: 1, expiresAt },
    ]);
  });

  it('gives a key made to live 12 hours one notice, saying it has a day at most, not a 7-day notice beside it', async () => {
    // docs/WEBHOOKS.md: `daysLeft` is 7 or 1, and messages are "Not in order. Each message is
    // delivered on its own schedule". A receiver that schedules the rotation from `daysLeft`
    // (rotate 2 days before) and is told "7" about a key that expires in 12 hours, possibly after it
    // was told "1", schedules the rotation five days after the key stopped working. A careful user
    // expects the notice of the nearest threshold the key is inside, once (a key made to live less
    // than a day is inside the 1-day threshold from its first moment). What the code does: each
    // check (sources.ts, checkKeyExpiry) runs the 7-day pass, then the 1-day pass, each on its own,
    // so a key with under a day to live gets both notices at once, `daysLeft: 7` among them.
    const house = await tenant('enterprise', 'Short keys');
    const endpoint = await endpointFor(house.key, `/short-${randomBytes(4).toString('hex')}`, ['key.expiring']);
    at('2032-08-01T08:00:00.000Z');
    const made = await api('POST', '/keys', {
      key: house.key,
      body: { name: 'night shift', scopes: ['assets:read'], expiresIn: '12h' },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    await waitFor('a notice', async () =>
      (await noticesOf(house.key, endpoint.id, made.body.id)).length > 0 ? true : undefined,
    );
    await severalChecks();
    expect(await noticesOf(house.key, endpoint.id, made.body.id)).toEqual([
      { daysLeft: 1, expiresAt: '2032-08-01T20:00:00.000Z' },
    ]);
  });
});

describe('console sessions when the clock steps back', () => {
  const withCookie = (token: string, method: string, path: string, address: string) =>
    api(method, path, { headers: { cookie: `hallmark_session=${token}`, 'x-forwarded-for': address } });

  async function signIn(apiKey: string, address: string) {
    const response = await api('POST', '/sessions', { body: { apiKey }, headers: { 'x-forwarded-for': address } });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    const token = /hallmark_session=([0-9a-f]{64});/.exec(response.headers.get('set-cookie') ?? '')?.[1];
    if (!token) throw new Error('no session cookie');
    return { token, session: response.body.session as Json };
  }

  it('ends a session left idle 31 minutes by the clock after a 2-hour step back', async () => {
    // docs/API.md, Console sessions, Expiry: "30 minutes after the last use". A console left open on
    // a shared desk must lock 30 minutes after its last use. What the code does: the idle expiry
    // (`idle_expires_at`) only ever moves forward (console-sessions.ts, touchedIdleExpiry and
    // touchConsoleSession `idle_expires_at < $2`), so after a step back it stays where the last use
    // before the step put it: a session idle for 31 minutes after the step lives on until that
    // instant comes round again (here, 2 h 30 min of idleness).
    const owner = await tenant('enterprise', 'Idle console');
    const address = fromAddress();
    at('2032-12-01T09:00:00.000Z');
    const { token } = await signIn(owner.key, address);
    at('2032-12-01T09:10:00.000Z');
    expect((await withCookie(token, 'GET', '/keys', address)).status).toBe(200);
    // The clock steps back two hours; the session is used once more, then left.
    at('2032-12-01T07:10:00.000Z');
    expect((await withCookie(token, 'GET', '/keys', address)).status).toBe(200);
    at('2032-12-01T07:41:00.000Z');
    const idle = await withCookie(token, 'GET', '/keys', address);
    expect(idle.status, `31 minutes after its last use: ${JSON.stringify(idle.body).slice(0, 300)}`).toBe(401);
    expect(idle.body.error?.code).toBe('MISSING_API_KEY');
  });

  it('does not bring back a session that was answered as ended once the clock steps back into its life', async () => {
    // docs/API.md, Console sessions: "No session, or one that ended: 401 MISSING_API_KEY and the
    // cookie cleared." Ended means ended: a cookie copied off the machine (or a tab that kept it) must
    // not open the account again because the clock stepped back eleven minutes. What the code does:
    // an ended session is only filtered out by the look-up (`idle_expires_at > now`); its row stays
    // until the sweep (every 10 minutes) deletes it, so a step back before the sweep revives it.
    const owner = await tenant('enterprise', 'Ended console');
    const address = fromAddress();
    at('2032-12-02T09:00:00.000Z');
    const { token } = await signIn(owner.key, address);
    at('2032-12-02T09:31:00.000Z');
    const ended = await withCookie(token, 'GET', '/sessions/current', address);
    expectError(ended, 401, 'MISSING_API_KEY');
    expect(ended.headers.get('set-cookie') ?? '').toMatch(/hallmark_session=;/);
    at('2032-12-02T09:20:00.000Z');
    const revived = await withCookie(token, 'GET', '/keys', address);
    expect(revived.status, `after the step back: ${JSON.stringify(revived.body).slice(0, 300)}`).toBe(401);
  });
});

describe('an Idempotency-Key at the end of its day', () => {
  it('replays one ms before 24 h, runs again at 24 h answering the same code, and charges the quota once', async () => {
    // docs/API.md, Idempotency-Key: the answer is kept "for 24 h from the first attempt"; after it
    // "the key is free again (a new request with it runs)"; and a run that finds what the first made
    // (the code's asset id follows from the key, the item's place, GTIN and serial) answers it and
    // "is not charged twice". A client whose retry straddles the 24 h gets the same code either way.
    const brand = await tenant('free', 'Idempotent day');
    const gtin = freshGtin();
    await grant(brand.id, gtin);
    const headers = { 'idempotency-key': `day-end-${randomBytes(6).toString('hex')}` };
    const body = { gtin, serialNumber: 'DAY-END-1' };
    at('2032-05-01T10:00:00.000Z');
    const first = await api('POST', '/code/generate', { key: brand.key, headers, body });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const generated = async () =>
      (await api('GET', '/usage', { key: brand.key })).body.quotas.find((quota: Json) => quota.name === 'generate').used;
    expect(await generated()).toBe(1);

    at('2032-05-02T09:59:59.999Z');
    const lastMoment = await api('POST', '/code/generate', { key: brand.key, headers, body });
    expect(lastMoment.status).toBe(201);
    expect(lastMoment.headers.get('idempotent-replayed')).toBe('true');
    expect(lastMoment.body).toEqual(first.body);

    at('2032-05-02T10:00:00.000Z');
    const dayLater = await api('POST', '/code/generate', { key: brand.key, headers, body });
    expect(dayLater.status, JSON.stringify(dayLater.body)).toBe(201);
    expect(dayLater.headers.get('idempotent-replayed')).toBeNull();
    expect(dayLater.body.assetId).toBe(first.body.assetId);
    expect(dayLater.body.url).toBe(first.body.url);
    expect(await generated(), 'the code of 2032-05-01 is not paid for again on 2032-05-02').toBe(0);
    // One code on record, not two.
    const listed = await api('GET', `/codes?gtin=${gtin}`, { key: brand.key });
    expect(listed.body.data.map((code: Json) => code.assetId)).toEqual([first.body.assetId]);
  });
});

describe('refusals a gateway remembers, when the clock steps back', () => {
  it('does not hold an account’s batches for an hour after a burst refused just before a 1-hour step back', async () => {
    // docs/API.md, Limits, "Refused before the body is read": a batch (or a keyed request) of an
    // account a gateway has just seen refused is refused unread "the per-second burst until its
    // second ends", and `Retry-After` is "the seconds until the refusing window ends (when the same
    // request could go through)". After a step back the account's burst counter is that of another
    // second, empty, and a plain request goes through: the batch must too. What the code does: the
    // remembered refusal (auth/recent-refusals.ts, `untilMs` = the end of the refused second) is an
    // instant, now an hour ahead, so every batch and every request with an Idempotency-Key of the
    // account is refused for that hour with `Retry-After: 3600`, while its other requests pass.
    const brand = await tenant('free', 'Burst before a step');
    const gtin = freshGtin();
    await grant(brand.id, gtin);
    at('2032-10-10T10:00:00.500Z');
    // The free tier's burst is 20 a second: the 21st request of the (frozen) second is refused.
    let refused: ApiResponse<Json> | undefined;
    for (let i = 0; i < 25 && !refused; i++) {
      const answer = await api('GET', '/usage', { key: brand.key });
      if (answer.status === 429) refused = answer;
    }
    expect(refused?.body.error?.details?.limit).toBe('requests-per-second');
    // Within that second a batch is refused unread, as documented.
    const sameSecond = await api('POST', '/code/generate/batch', {
      key: brand.key,
      body: { items: [{ gtin, serialNumber: 'B-0' }] },
    });
    expectError(sameSecond, 429, 'RATE_LIMITED');

    at('2032-10-10T09:00:00.500Z');
    expect((await api('GET', '/usage', { key: brand.key })).status, 'a plain request after the step').toBe(200);
    const batch = await api('POST', '/code/generate/batch', { key: brand.key, body: { items: [{ gtin, serialNumber: 'B-1' }] } });
    expect(
      batch.status,
      `a batch after the step: ${JSON.stringify(batch.body).slice(0, 300)}, Retry-After ${batch.headers.get('retry-after')}`,
    ).toBe(200);
    const keyed = await api('POST', '/code/generate', {
      key: brand.key,
      headers: { 'idempotency-key': `after-step-${randomBytes(6).toString('hex')}` },
      body: { gtin, serialNumber: 'B-2' },
    });
    expect(keyed.status, `a keyed generate after the step: Retry-After ${keyed.headers.get('retry-after')}`).toBe(201);
  });

  it('answers a bad key 401 again after a 1-hour step back, not the address’s 429 of a minute an hour ahead', async () => {
    // docs/API.md, Limits, Failed authentication: past the failures of a minute (fixed windows),
    // an address's bad keys get 429 "with Retry-After to the end of the minute". After a step back the
    // minute is another, with no failure counted, and a bad key is told why it is refused (401). What
    // the code does: the gateway's hold of the address (auth/failed-auth-holds.ts) lasts until the
    // refused minute's end as an instant, an hour ahead after the step: for that hour a key the
    // gateway knows to be bad (a script retrying with its expired or revoked key, from behind the
    // same NAT as others) is told 429 "retry after 3,6xx s" instead of its 401. (A key it has not
    // seen is looked up and counted in the new minute: 401.)
    const owner = await tenant('enterprise', 'Held address');
    const address = fromAddress();
    const badKey = `svc_live_${randomBytes(32).toString('hex')}`;
    at('2032-11-11T11:11:30.000Z');
    let held: ApiResponse<Json> | undefined;
    for (let i = 0; i < 8 && !held; i++) {
      const answer = await api('GET', '/keys', { key: badKey, headers: { 'x-forwarded-for': address } });
      if (answer.status === 429) held = answer;
      else expectError(answer, 401, 'INVALID_API_KEY');
    }
    expect(held?.body.error?.details?.limit).toBe('failed-authentications-per-address');
    expect(held?.headers.get('retry-after')).toBe('30');

    at('2032-11-11T10:11:30.000Z');
    // A good key from the address is served either way.
    expect((await api('GET', '/keys', { key: owner.key, headers: { 'x-forwarded-for': address } })).status).toBe(200);
    const after = await api('GET', '/keys', { key: badKey, headers: { 'x-forwarded-for': address } });
    expect(
      [after.status, after.body.error?.code],
      `Retry-After ${after.headers.get('retry-after')}: ${after.body.error?.message}`,
    ).toEqual([401, 'INVALID_API_KEY']);
  });
});

describe('an auditor’s checkpoints when the clock steps back between two events', () => {
  it('never dates a larger tree of an asset earlier than a smaller one it signed before', async () => {
    // docs/COMPLIANCE.md, Signed checkpoints: "A checkpoint says 'the asset's history was this size,
    // with this root, at this time'", and an export cut short "can only use a checkpoint from back
    // when the tree was that size, and shows that time": the auditor asks for one signed recently
    // enough. That holds only if a checkpoint's time never goes back as the tree grows. Here the
    // brand exports the history at 11:00 (two events); the clock steps back to 10:00 and a
    // condition report is recorded (three events), and every checkpoint signed until the clock
    // passes 11:00 again says "three events at 10:xx". The two-event export "as of 11:00" then
    // looks newer than the three-event one, and an auditor asking for "the history as of 11:00 or
    // later" accepts the export without the condition report. The time a checkpoint vouches for must
    // not go back (checkpoint-signer.ts signed with `clock()` as it was). Nor does an event's own
    // `occurredAt` since 2026-12-05: dated at its predecessor's time, 11:00, not at 10:00 before it.
    const house = await tenant('enterprise', 'Audited house');
    at('2032-06-15T11:00:00.000Z');
    const registered = await api('POST', '/auction/objects/register', {
      key: house.key,
      body: { title: 'Daytona 6239', category: 'watch', ownerId: 'client-ann' },
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    const objectId = registered.body.object.id as string;
    const record = async (eventType: string, extra: Json = {}) => {
      const recorded = await api('POST', '/auction/provenance/events', {
        key: house.key,
        body: { objectId, eventType, actorRole: 'auction_house', description: `${eventType} note`, ...extra },
      });
      expect(recorded.status, JSON.stringify(recorded.body)).toBe(201);
    };
    const exportOf = (events: number) =>
      waitFor(`the ${events}-event export`, async () => {
        const exported = await api('GET', `/compliance/${objectId}/export?format=json`, { key: house.key });
        return exported.status === 200 && exported.body.events?.length === events
          ? (exported.body as unknown as ComplianceExportDocument)
          : undefined;
      });
    await record('cataloged');
    const jwks = (await call(t.url, 'GET', '/.well-known/jwks.json')).body as unknown as JsonWebKeySet;
    const kept = auditExport(await exportOf(2), jwks);
    expect(kept).toMatchObject({ valid: true, treeSize: 2, checkpointSignedAt: '2032-06-15T11:00:00.000Z' });

    at('2032-06-15T10:00:00.000Z');
    await record('condition_report', { evidence: { finding: 'service dial, case polished' } });
    at('2032-06-15T10:30:00.000Z');
    const genuine = await exportOf(3);
    // The chain itself stays whole for the auditor, in sequence order, its times never going back.
    const current = auditExport(genuine, jwks);
    expect(current).toMatchObject({ valid: true, treeSize: 3 });
    expect(genuine.events.map((event) => event.sequence)).toEqual([1, 2, 3]);
    expect(genuine.events.map((event) => event.occurredAt)).toEqual([
      '2032-06-15T11:00:00.000Z',
      '2032-06-15T11:00:00.000Z',
      '2032-06-15T11:00:00.000Z',
    ]);
    // The three-event tree's checkpoint must not say it is older than the two-event one's.
    expect(
      ms(current.checkpointSignedAt as string),
      `three events signed at ${current.checkpointSignedAt}, two events at ${kept.checkpointSignedAt}`,
    ).toBeGreaterThanOrEqual(ms(kept.checkpointSignedAt as string));
    expect(iso(ms(current.checkpointSignedAt as string))).toBe(current.checkpointSignedAt);
  });
});
