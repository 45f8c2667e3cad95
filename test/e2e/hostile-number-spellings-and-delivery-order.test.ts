import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSigningKeyring, migrateAccounts, provisionAccount } from '@hallmark/accounts';
import type { ComplianceExportDocument, JsonWebKeySet } from '@hallmark/client';
import type { Principal } from '@hallmark/contracts';
import { createSqlEventStore } from '@hallmark/event-store';
import { createLogger } from '@hallmark/runtime';
import { createPostgresDatabase, createTestDatabase, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateCompliance } from '../../services/compliance-service/src/store/merkle-store.ts';
import { createWebhookEndpoints, type WebhookEndpoints } from '../../services/compliance-service/src/webhooks/endpoints.ts';
import type { Send, SendResult } from '../../services/compliance-service/src/webhooks/http-sender.ts';
import { enqueueMessages } from '../../services/compliance-service/src/webhooks/outbox.ts';
import { type DeliverySettings, startDeliveryWorker } from '../../services/compliance-service/src/webhooks/worker.ts';
import { auditVerdicts } from '../support/auditors.ts';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';
import { waitFor } from '../support/wait.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

// ---------------------------------------------------------------------------------------------
// The embedded product (parts 1, 2 and 4).

let t: TestProduct;
let operator: string;
let serialCounter = 0;
const gtin = '09506000134369';
const nextSerial = () => `REVIEW-${Date.now().toString(36)}-${serialCounter++}`;

/** A request whose body is sent exactly as written, with the given content type. */
async function raw(
  method: string,
  path: string,
  body: string | Uint8Array,
  contentType = 'application/json',
): Promise<{ status: number; text: string; json: Json | undefined }> {
  const response = await fetch(`${t.url}/api/v1${path}`, {
    method,
    headers: { 'x-api-key': operator, 'content-type': contentType },
    body,
    signal: AbortSignal.timeout(15_000),
  });
  const text = await response.text();
  let json: Json | undefined;
  try {
    json = JSON.parse(text) as Json;
  } catch {
    json = undefined;
  }
  return { status: response.status, text, json };
}

/** A generate request whose metadata is `metadata` written as is. */
const generateBody = (metadata: string, serial = nextSerial()) =>
  `{"gtin":"${gtin}","serialNumber":"${serial}","metadata":${metadata}}`;

beforeAll(async () => {
  t = await startTestProduct({ HALLMARK_PUBLIC_RATE_LIMIT: '100000' });
  operator = t.product.generatedOperatorKey as string;
}, 120_000);

afterAll(async () => {
  await t?.stop();
});

describe('1. the gateway JSON parser', () => {
  it('still takes every valid body it took before: BOM, content-type spellings, 1E+21, -0, tiny fractions, digit runs in strings and keys', async () => {
    const cases: Array<{ name: string; body: string | Uint8Array; type?: string }> = [
      { name: 'exponent', body: generateBody('{"grams":1E+21,"small":1e-7}') },
      { name: 'negative zero', body: generateBody('{"zero":-0,"tiny":0.0000001}') },
      { name: 'long mantissa with exponent', body: generateBody('{"n":12345678901234567e-1}') },
      {
        name: 'digit runs in strings and keys',
        body: generateBody('{"90071992547409921":"90071992547409921","s":"\\"90071992547409921\\"","t":["x\\\\",12]}'),
      },
      { name: 'escaped quote before a number', body: generateBody('{"a\\"":1,"b":"\\"","c":9007199254740991}') },
      {
        name: 'UTF-8 BOM',
        body: new Uint8Array([0xef, 0xbb, 0xbf, ...Buffer.from(generateBody('{"n":90071992547409920}'))]),
      },
      { name: 'charset parameter', body: generateBody('{"n":1}'), type: 'application/json; charset=utf-8' },
      { name: 'odd case', body: generateBody('{"n":2}'), type: 'Application/JSON; Charset="UTF-8"' },
    ];
    const statuses: Record<string, string> = {};
    for (const each of cases) {
      const answer = await raw('POST', '/code/generate', each.body, each.type);
      statuses[each.name] = answer.status === 201 ? '201' : `${answer.status} ${answer.text.slice(0, 200)}`;
    }
    expect(statuses).toEqual(Object.fromEntries(cases.map((each) => [each.name, '201'])));
  }, 60_000);

  it('still refuses __proto__ and constructor.prototype keys, an empty body and a body of whitespace, in the envelope', async () => {
    const bodies = {
      proto: generateBody('{"__proto__":{"admin":true},"n":90071992547409920}'),
      constructor: generateBody('{"constructor":{"prototype":{"admin":true}}}'),
      empty: '',
      whitespace: ' \r\n\t ',
    };
    const answers: Record<string, string> = {};
    for (const [name, body] of Object.entries(bodies)) {
      const answer = await raw('POST', '/code/generate', body);
      answers[name] = `${answer.status} ${answer.json?.error?.code}`;
    }
    expect(answers).toEqual({
      proto: '400 VALIDATION_ERROR',
      constructor: '400 VALIDATION_ERROR',
      empty: '400 VALIDATION_ERROR',
      whitespace: '400 VALIDATION_ERROR',
    });
  }, 30_000);

  it('refuses the rounded whole number 90071992547409921 however it is spelled, rather than storing 90071992547409920 without a word', async () => {
    // The commit's rule: "a whole number written with more digits than a double holds ... is a 400
    // VALIDATION_ERROR naming its field, wherever it is in a JSON body". A fraction of .0 or an
    // exponent is the same whole number to a person, Java's BigDecimal, Python's Decimal or jq.
    const spellings = [
      '90071992547409921',
      '90071992547409921.0',
      '9.0071992547409921e16',
      '90071992547409921e0',
      '-90071992547409921.00',
    ];
    const outcome: Record<string, string> = {};
    for (const spelling of spellings) {
      const answer = await raw('POST', '/code/generate', generateBody(`{"certificate":${spelling}}`));
      if (answer.status === 201) {
        const stored = await call<Json>(t.url, 'GET', `/api/v1/codes/${answer.json?.assetId}`, { key: operator });
        outcome[spelling] =
          `201, stored as ${JSON.stringify(stored.body.metadata?.certificate ?? stored.body.code?.metadata?.certificate ?? null)}`;
      } else {
        outcome[spelling] = `${answer.status} ${answer.json?.error?.code} ${answer.json?.error?.details?.fields?.[0]?.field}`;
      }
    }
    expect(outcome).toEqual(
      Object.fromEntries(spellings.map((spelling) => [spelling, '400 VALIDATION_ERROR metadata.certificate'])),
    );
  }, 60_000);

  it('a body nested past the 64 levels allowed is refused in an answer of bounded size, whatever number lies at the bottom', async () => {
    const depth = 150_000;
    const nested = `${'['.repeat(depth)}90071992547409921${']'.repeat(depth)}`;
    const plain = `${'['.repeat(depth)}1${']'.repeat(depth)}`;
    const rounded = await raw('POST', '/code/generate', generateBody(`{"deep":${nested}}`));
    const control = await raw('POST', '/code/generate', generateBody(`{"deep":${plain}}`));
    // The same nesting without the number: refused for its depth, a few hundred bytes.
    expect(control.status).toBe(400);
    expect(control.text.length).toBeLessThan(4_096);
    expect(rounded.status).toBe(400);
    // Refused by the parser before the depth check: the field names every level ("deep.0.0.0…"), twice.
    expect(
      rounded.text.length,
      `answer of ${rounded.text.length} bytes, field ${String(rounded.json?.error?.details?.fields?.[0]?.field).slice(0, 40)}…`,
    ).toBeLessThan(16_384);
  }, 60_000);
});

// ---------------------------------------------------------------------------------------------
// 2. The offline auditors on a genuine export, tampered.

describe('2. the offline auditors on a genuine export', () => {
  let folder: string;
  let jwks: JsonWebKeySet;
  let jwksPath: string;
  let genuine: string;
  const certificate = '90071992547409920';

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'hallmark-review-today-'));
    const created = await call<Json>(t.url, 'POST', '/api/v1/accounts', {
      key: operator,
      body: { name: 'Review auction house', tier: 'enterprise' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const house = created.body.apiKey.secret as string;
    const registered = await call<Json>(t.url, 'POST', '/api/v1/auction/objects/register', {
      key: house,
      body: { title: 'Speedmaster 145.022', category: 'watch', ownerId: 'client-joe' },
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    const objectId = registered.body.object.id as string;
    // Sent as text so that the numbers are written exactly so (1E+21 and a tiny fraction beside the certificate).
    const recorded = await fetch(`${t.url}/api/v1/auction/provenance/events`, {
      method: 'POST',
      headers: { 'x-api-key': house, 'content-type': 'application/json' },
      body: `{"objectId":"${objectId}","eventType":"condition_report","actorRole":"auction_house","description":"report","evidence":{"certificateNo":${certificate},"grams":1E+21,"ratio":0.0000001}}`,
    });
    expect(recorded.status, await recorded.text()).toBe(201);
    genuine = await waitFor('the 2-event export', async () => {
      const response = await fetch(`${t.url}/api/v1/compliance/${objectId}/export?format=json`, {
        headers: { 'x-api-key': house },
      });
      const text = await response.text();
      return response.status === 200 && (JSON.parse(text) as ComplianceExportDocument).events.length === 2 ? text : undefined;
    });
    jwks = (await (await fetch(`${t.url}/.well-known/jwks.json`)).json()) as JsonWebKeySet;
    jwksPath = join(folder, 'jwks.json');
    await writeFile(jwksPath, JSON.stringify(jwks));
  }, 120_000);

  afterAll(async () => {
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  /** The three auditors' verdicts on one file's text: TS auditExportText, `hallmark audit`, Python's audit_export. */
  const verdicts = (text: string) => auditVerdicts(text, { jwks, jwksPath }, folder);

  it('the genuine export (a number past 2^53, 1e+21 and 1e-7 in its evidence) audits valid everywhere', async () => {
    expect(genuine).toContain(`"certificateNo":${certificate}`);
    expect(await verdicts(genuine)).toEqual({ ts: true, command: 0, python: true });
  }, 60_000);

  it('refuses the forged certificate number written 90071992547409921.0 (what a person, BigDecimal or jq read), as it refuses 90071992547409921', async () => {
    const plainForgery = genuine.replace(`"certificateNo":${certificate}`, '"certificateNo":90071992547409921');
    const disguised = genuine.replace(`"certificateNo":${certificate}`, '"certificateNo":90071992547409921.0');
    expect(disguised).not.toBe(genuine);
    expect(await verdicts(plainForgery)).toEqual({ ts: false, command: 1, python: false });
    expect(await verdicts(disguised)).toEqual({ ts: false, command: 1, python: false });
  }, 60_000);
});

// ---------------------------------------------------------------------------------------------
// 3. The webhook worker's claim (unit level, a test database, a stub `send` that holds each attempt).

describe('3. the webhook claim: an account’s freed places', () => {
  let db: SqlDatabase;
  let drop: () => Promise<void>;
  let owner: Principal;
  let keyring: ReturnType<typeof createSigningKeyring>;
  let endpoints: WebhookEndpoints;
  const masterKey = randomBytes(32);
  const log = createLogger({ service: 'review-todays-changes', instance: 'test', level: 'silent' });
  let wakeAll = () => {};
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

  function heldSends() {
    const held: Array<{ messageId: string; endpoint: string; answer: (result: SendResult) => void }> = [];
    const send: Send = (target, headers) =>
      new Promise((resolve) =>
        held.push({ messageId: String(headers['webhook-id']), endpoint: JSON.stringify(target).slice(0, 80), answer: resolve }),
      );
    return { held, send };
  }

  function worker(send: Send) {
    return startDeliveryWorker({
      db,
      masterKey,
      clock: () => new Date(),
      log,
      settings,
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

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  async function until<T>(what: string, probe: () => T | undefined, ms = 10_000): Promise<T> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      const value = probe();
      if (value !== undefined) return value;
      await sleep(10);
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  /** Messages written straight to one endpoint's outbox, due at `at` (so their due order is known). */
  let causes = 0;
  async function enqueue(endpointId: string, type: 'scan.counterfeit' | 'scan.suspicious', at: Date, deferred = false) {
    causes += 1;
    const cause = `review-${causes}-${randomBytes(4).toString('hex')}`;
    await enqueueMessages(
      db,
      [{ accountId: owner.accountId, environment: owner.environment, type, cause, data: { n: causes }, at, deferred }],
      { endpointId },
    );
    const [row] = await db.query<{ message_id: string }>(
      `SELECT message_id FROM webhook_messages WHERE endpoint_id = $1 ORDER BY created_at DESC, message_id LIMIT 1`,
      [endpointId],
    );
    return row?.message_id as string;
  }

  const inFlight = async () =>
    db.query<{ endpoint_id: string; n: string | number }>(
      'SELECT endpoint_id, count(*) AS n FROM webhook_deliveries_in_flight WHERE account_id = $1 GROUP BY endpoint_id',
      [owner.accountId],
    );

  beforeAll(async () => {
    const test = await createTestDatabase('review_todays_changes');
    db = createPostgresDatabase({ connectionString: test.url, applicationName: 'test-review-todays-changes' });
    drop = async () => {
      await db.close();
      await test.drop();
    };
    const store = await createSqlEventStore(db, { pollIntervalMs: 20 });
    await migrateAccounts(db);
    await migrateCompliance(db);
    const account = await provisionAccount(
      { db, eventStore: store },
      { name: 'Review hooks', tier: 'enterprise', environment: 'live' },
      new Date(),
    );
    owner = { accountId: account.account.id, environment: 'live' };
    keyring = createSigningKeyring(db, masterKey);
    endpoints = createWebhookEndpoints({
      db,
      masterKey,
      clock: () => new Date(),
      rotationGraceMs: 60_000,
      wake: () => wakeAll(),
    });
  }, 60_000);

  afterAll(async () => {
    await drop?.();
  });

  async function removeAll() {
    const rows = await db.query<{ endpoint_id: string }>('SELECT endpoint_id FROM webhook_endpoints WHERE account_id = $1', [
      owner.accountId,
    ]);
    for (const row of rows) await endpoints.remove(owner, row.endpoint_id);
  }

  it('a freed place goes to another endpoint’s real alert before an endpoint’s deferred forged-link scan.counterfeit', async () => {
    const { held, send } = heldSends();
    const slow = await endpoints.create(owner, { url: 'http://127.0.0.1:9/partner', eventTypes: ['scan.suspicious'] });
    const alerts = await endpoints.create(owner, { url: 'http://127.0.0.1:9/brand-alerts', eventTypes: ['scan.suspicious'] });
    const forged = await endpoints.create(owner, {
      url: 'http://127.0.0.1:9/brand-counterfeits',
      eventTypes: ['scan.counterfeit'],
    });
    const running = worker(send);
    wakeAll = () => running.wake();
    try {
      const hourAgo = new Date(Date.now() - 3_600_000);
      // The account's 4 places: 2 at a slow partner, 2 at the brand's alerts endpoint.
      await enqueue(slow.id, 'scan.suspicious', hourAgo);
      await enqueue(slow.id, 'scan.suspicious', hourAgo);
      const firstAlert = await enqueue(alerts.id, 'scan.suspicious', hourAgo);
      await enqueue(alerts.id, 'scan.suspicious', hourAgo);
      running.wake();
      await until('the account’s 4 places taken', () => held[3]);
      // Meanwhile: a forged link scanned (deferred, anyone can cause it) and a real alert after it.
      const deferred = await enqueue(forged.id, 'scan.counterfeit', new Date(Date.now() - 60_000), true);
      const realAlert = await enqueue(alerts.id, 'scan.suspicious', new Date());
      await sleep(200);
      expect(held).toHaveLength(4);
      // One of the brand's alerts is delivered: its place is the account's only free one.
      held.find((each) => each.messageId === firstAlert)?.answer({ status: 204 });
      const next = await until('the next attempt', () => held[4]);
      expect(
        {
          next:
            next.messageId === realAlert
              ? 'real alert'
              : next.messageId === deferred
                ? 'deferred forged-link scan'
                : next.messageId,
        },
        'before eedb2ce, non-deferred messages ranked first within the account (ORDER BY last, …)',
      ).toEqual({ next: 'real alert' });
    } finally {
      for (const each of held) each.answer({ status: 204 });
      await running.stop();
      await removeAll();
    }
  }, 30_000);

  it('four slow endpoints with an older backlog do not hold every place of the account while the brand’s endpoint waits', async () => {
    const { held, send } = heldSends();
    const slow = [];
    for (let i = 0; i < 4; i++)
      slow.push(await endpoints.create(owner, { url: `http://127.0.0.1:9/slow-${i}`, eventTypes: ['scan.suspicious'] }));
    const brand = await endpoints.create(owner, { url: 'http://127.0.0.1:9/brand', eventTypes: ['scan.suspicious'] });
    const dayAgo = new Date(Date.now() - 86_400_000);
    for (const endpoint of slow)
      for (let i = 0; i < 3; i++) await enqueue(endpoint.id, 'scan.suspicious', new Date(dayAgo.getTime() + i));
    const running = worker(send);
    wakeAll = () => running.wake();
    let peak = { account: 0, endpoint: 0 };
    try {
      await until('the account’s 4 places taken', () => held[3]);
      const alert = await enqueue(brand.id, 'scan.suspicious', new Date());
      running.wake();
      await sleep(200);
      // Six slow attempts end, one at a time (2xx, slowly): each freed place is the account's only one.
      for (let answered = 0; answered < 6; answered++) {
        const counts = await inFlight();
        peak = {
          account: Math.max(
            peak.account,
            counts.reduce((sum, row) => sum + Number(row.n), 0),
          ),
          endpoint: Math.max(peak.endpoint, ...counts.map((row) => Number(row.n))),
        };
        held[answered]?.answer({ status: 204 });
        await until(`attempt ${answered + 5}`, () => held[answered + 4]);
        if (held.some((each) => each.messageId === alert)) break;
      }
      // The caps still hold (4 per account, 2 per endpoint).
      expect(peak.account).toBeLessThanOrEqual(4);
      expect(peak.endpoint).toBeLessThanOrEqual(2);
      const brandAt = held.findIndex((each) => each.messageId === alert);
      // Not a broken setup: once the slow backlog (12 messages) is through, the brand's alert does go.
      let deliveredAt = brandAt;
      for (let round = 0; deliveredAt < 0 && round < 16; round++) {
        for (const each of held) each.answer({ status: 204 });
        await sleep(150);
        deliveredAt = held.findIndex((each) => each.messageId === alert);
      }
      expect(deliveredAt, 'the brand’s alert is delivered at all').toBeGreaterThanOrEqual(0);
      expect(
        { brandAttemptIndex: brandAt, deliveredAtAttempt: deliveredAt },
        'the brand’s alert should take the first place freed after it was written (attempt index 4)',
      ).toEqual({ brandAttemptIndex: 4, deliveredAtAttempt: 4 });
    } finally {
      for (const each of held) each.answer({ status: 204 });
      await running.stop();
      await removeAll();
    }
  }, 60_000);
});

// ---------------------------------------------------------------------------------------------
// 4. GET /scans/top-codes?verdict=

describe('4. top-codes verdict', () => {
  it('takes SUSPICIOUS and COUNTERFEIT, and answers every other value (case, repeated, prototype names, empty) 400 in the envelope', async () => {
    const queries = {
      SUSPICIOUS: 200,
      COUNTERFEIT: 200,
      suspicious: 400,
      'SUSPICIOUS&verdict=COUNTERFEIT': 400,
      toString: 400,
      constructor: 400,
      ['__proto__']: 400,
      both: 400,
      '': 400,
      'SUSPICIOUS%00': 400,
    } as Record<string, number>;
    const answers: Record<string, string> = {};
    const expected: Record<string, string> = {};
    for (const [value, status] of Object.entries(queries)) {
      const response = await fetch(`${t.url}/api/v1/scans/top-codes?verdict=${value}`, { headers: { 'x-api-key': operator } });
      const body = (await response.json().catch(() => ({}))) as Json;
      answers[value] = `${response.status} ${status === 200 ? Array.isArray(body.codes) : body.error?.code}`;
      expected[value] = `${status} ${status === 200 ? true : 'VALIDATION_ERROR'}`;
    }
    expect(answers).toEqual(expected);
  }, 30_000);
});
