// The write side of code generation under races (from a review of 2026-12-05): batches and
// single generates racing for one serial through two gateways and two code-service replicas, a
// serial repeated across a batch's chunks, and what GET /codes and the event store hold against
// what each answer said.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, freshGtin } from '../support/accounts.ts';
import { earlyInWindow } from '../support/client-address.ts';
import { type DistributedProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { call } from '../support/embedded.ts';
import { sqlOnce } from '../support/sql-once.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let product: DistributedProduct;
const gateway = (i: number) => (product.gatewayUrls as string[])[i % 2] as string;
const api = (i: number, method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(gateway(i), method, `/api/v1${path}`, options);
const sql = <T = Json>(text: string, params: unknown[] = []) => sqlOnce<T>(product.databaseUrl, text, params);

/** An account of `tier` made through the first gateway, granted `gtin` through the second. */
const newAccount = (tier: 'free' | 'starter', gtin?: string) =>
  createAccount(gateway(0), product.operatorKey, { tier, ...(gtin ? { gtin } : {}), grantVia: gateway(1) });

/** JSON with every object's keys sorted (what the sender sent, as JSON, whatever order a store keeps). */
const sortedJson = (value: unknown): string =>
  JSON.stringify(value, (_key, member) =>
    member && typeof member === 'object' && !Array.isArray(member)
      ? Object.fromEntries(
          Object.keys(member)
            .sort()
            .map((key) => [key, member[key]]),
        )
      : member,
  );

const generateUsed = async (key: string) =>
  (await api(1, 'GET', '/usage', { key })).body.quotas?.find((quota: Json) => quota.name === 'generate')?.used as number;

beforeAll(async () => {
  product = await startDistributedProduct({}, { gateways: 2, replicas: { 'code-service': 2 } });
}, 120_000);
afterAll(async () => {
  await product?.stop();
}, 60_000);

describe('generate races through two gateways and two code-service replicas', () => {
  it('a serial repeated in two chunks of one batch is DUPLICATE_SERIAL for the later item, and the earlier item’s code is stored', async () => {
    // docs/API.md, Batch: "a repeated GTIN and serial within the batch is DUPLICATE_SERIAL for the
    // later one". Index 0 sits in the first chunk (500 items), index 500 alone in the second; the
    // gateway sends chunks at once (batchConcurrency 4), so the small later chunk commits first.
    const gtin = freshGtin();
    const account = await newAccount('starter', gtin);
    const prefix = `RC-${randomUUID().slice(0, 6)}`;
    const items: Json[] = Array.from({ length: 501 }, (_, i) => ({ gtin, serialNumber: `${prefix}-${i}` }));
    items[0] = { gtin, serialNumber: `${prefix}-X`, batchNumber: 'FIRST', metadata: { which: 'first' } };
    items[500] = { gtin, serialNumber: `${prefix}-X`, batchNumber: 'LATER', metadata: { which: 'later' } };
    const answer = await api(0, 'POST', '/code/generate/batch', { key: account.key, body: { items } });
    expect(answer.status, JSON.stringify(answer.body).slice(0, 500)).toBe(200);
    const first = answer.body.results[0];
    const later = answer.body.results[500];
    const stored = await sql('SELECT batch, metadata FROM codes WHERE account_id = $1 AND serial = $2', [
      account.id,
      `${prefix}-X`,
    ]);
    expect(stored).toHaveLength(1);
    expect(
      { first: first.code?.batch ?? first.error?.code, later: later.code?.batch ?? later.error?.code, stored: stored[0]?.batch },
      'the earlier item must win, as documented',
    ).toEqual({ first: 'FIRST', later: 'DUPLICATE_SERIAL', stored: 'FIRST' });
  }, 60_000);

  it('two batches and single generates racing for the same serials through both gateways: one code each, losers DUPLICATE_SERIAL and free', async () => {
    await earlyInWindow(86_400_000, 60_000);
    const gtin = freshGtin();
    const account = await newAccount('starter', gtin);
    const prefix = `RS-${randomUUID().slice(0, 6)}`;
    // 60 shared serials; batch A lists them ascending, batch B descending, each with its own lot.
    const serials = Array.from({ length: 60 }, (_, i) => `${prefix}-${i}`);
    const batchA = serials.map((serialNumber) => ({ gtin, serialNumber, batchNumber: 'A', metadata: { from: 'A' } }));
    const batchB = [...serials]
      .reverse()
      .map((serialNumber) => ({ gtin, serialNumber, batchNumber: 'B', metadata: { from: 'B' } }));
    const singles = serials
      .filter((_, i) => i % 6 === 0)
      .map((serialNumber, i) =>
        api(i, 'POST', '/code/generate', { key: account.key, body: { gtin, serialNumber, batchNumber: 'S' } }),
      );
    const [a, b, ...one] = await Promise.all([
      api(0, 'POST', '/code/generate/batch', { key: account.key, body: { items: batchA } }),
      api(1, 'POST', '/code/generate/batch', { key: account.key, body: { items: batchB } }),
      ...singles,
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    for (const single of one) expect([201, 409], JSON.stringify(single.body)).toContain(single.status);
    for (const single of one) if (single.status === 409) expect(single.body.error?.code).toBe('DUPLICATE_SERIAL');

    // What each answer said was made, by serial.
    const answered = new Map<string, Json[]>();
    const note = (code: Json) => answered.set(code.serial, [...(answered.get(code.serial) ?? []), code]);
    for (const result of [...a.body.results, ...b.body.results]) {
      if (result.code) note(result.code);
      else expect(result.error.code, JSON.stringify(result)).toBe('DUPLICATE_SERIAL');
    }
    for (const single of one) if (single.status === 201) note(single.body);
    // Exactly one winner per serial.
    for (const serial of serials) expect(answered.get(serial)?.length ?? 0, serial).toBe(1);

    // Stored: one row per serial, as answered, each with one code.generated event carrying the same link.
    const rows = await sql(
      `SELECT c.asset_id, c.serial, c.batch, c.url, c.signature,
              (SELECT count(*) FROM event_log e WHERE e.stream_id = 'asset-' || c.asset_id AND e.event_type = 'code.generated') AS events,
              (SELECT e.data->>'url' FROM event_log e WHERE e.stream_id = 'asset-' || c.asset_id AND e.event_type = 'code.generated' LIMIT 1) AS event_url
         FROM codes c WHERE c.account_id = $1`,
      [account.id],
    );
    expect(rows).toHaveLength(serials.length);
    for (const row of rows) {
      const code = (answered.get(row.serial) as Json[])[0] as Json;
      // (the row holds its link form, not the link: GET /codes below gives the link back)
      expect(
        { assetId: row.asset_id, signature: row.signature, events: Number(row.events), eventUrl: row.event_url },
        row.serial,
      ).toEqual({
        assetId: code.assetId,
        signature: code.signature,
        events: 1,
        eventUrl: code.url,
      });
    }
    // No orphan events: every code.generated event of this prefix has its row.
    const [orphans] = await sql(
      `SELECT count(*) AS n FROM event_log e WHERE e.event_type = 'code.generated' AND e.data->>'serial' LIKE $1
          AND NOT EXISTS (SELECT 1 FROM codes c WHERE 'asset-' || c.asset_id = e.stream_id)`,
      [`${prefix}-%`],
    );
    expect(Number(orphans?.n)).toBe(0);

    // GET /codes agrees with the answers (both gateways).
    const listed: Json[] = [];
    let cursor: string | undefined;
    do {
      const page = await api(listed.length % 2, 'GET', `/codes?gtin=${gtin}&limit=200${cursor ? `&cursor=${cursor}` : ''}`, {
        key: account.key,
      });
      expect(page.status).toBe(200);
      listed.push(...page.body.data);
      cursor = page.body.nextCursor ?? undefined;
    } while (cursor);
    expect(listed).toHaveLength(serials.length);
    for (const item of listed) {
      const code = (answered.get(item.serialNumber) as Json[])[0] as Json;
      expect({ assetId: item.assetId, url: item.url, createdAt: item.createdAt, batch: item.batchNumber }).toEqual({
        assetId: code.assetId,
        url: code.url,
        createdAt: code.createdAt,
        batch: code.batch,
      });
    }
    // Quota: one unit per code stored, none for the losers.
    expect(await generateUsed(account.key)).toBe(serials.length);
  }, 90_000);
});

describe('hostile metadata, stored and answered', () => {
  it('stores hostile metadata as sent, lists it as sent, and a keyed rerun (answer lost) is answered the same codes, charged once', async () => {
    await earlyInWindow(86_400_000, 60_000);
    const gtin = freshGtin();
    const account = await newAccount('starter', gtin);
    const prefix = `RM-${randomUUID().slice(0, 6)}`;
    let deep: Json = { leaf: 'x' };
    for (let i = 0; i < 56; i += 1) deep = { d: deep };
    const hostile: Json[] = [
      // (A "__proto__" key, or "constructor" holding "prototype", is refused for the whole body: 400, held.)
      { __proto_: { polluted: true }, a: 1, valueOf: { x: 1 } },
      { constructor: { name: 'x' }, toString: 'x', hasOwnProperty: 1 },
      { deep },
      { big: 'é'.repeat(7_000), astral: '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 👍🏽', rtl: '\u202Eevil', nul: 'a\u0001b' },
      { n: 1e21, small: 1e-7, neg: -0, max: Number.MAX_SAFE_INTEGER, f: 0.1 + 0.2 },
      { é: 1, e: 2, 'e\u0301': 3, '': 4, ' ': 5 },
      { arr: [null, true, false, [], {}, [[[]]]] },
    ];
    const items = hostile.map((metadata, i) => ({ gtin, serialNumber: `${prefix}-${i}`, metadata }));
    const idempotencyKey = `rm-${randomUUID()}`;
    const first = await api(0, 'POST', '/code/generate/batch', {
      key: account.key,
      headers: { 'idempotency-key': idempotencyKey },
      body: { items },
    });
    expect(first.status, JSON.stringify(first.body).slice(0, 800)).toBe(200);
    const outcome = first.body.results.map((result: Json) => result.code?.serial ?? result.error?.code);
    const made = first.body.results.filter((result: Json) => result.code);
    // Whatever is made is stored exactly as sent; whatever is refused is refused for a reason, not a 500.
    for (const result of first.body.results) {
      if (result.error) expect(result.error.code, JSON.stringify(result.error)).toBe('VALIDATION_ERROR');
    }
    for (const result of made) {
      const sent = hostile[result.index] as Json;
      const listed = await api(1, 'GET', `/codes?gtin=${gtin}&serial=${encodeURIComponent(result.code.serial)}`, {
        key: account.key,
      });
      expect(listed.body.data, result.code.serial).toHaveLength(1);
      expect(JSON.stringify(listed.body.data[0].metadata), `listed metadata of item ${result.index}`).toBe(
        JSON.stringify(JSON.parse(JSON.stringify(listed.body.data[0].metadata))),
      );
      expect(sortedJson(listed.body.data[0].metadata), `listed metadata of item ${result.index}`).toBe(sortedJson(sent));
      const [event] = await sql(
        `SELECT data->'metadata' AS metadata FROM event_log WHERE stream_id = $1 AND event_type = 'code.generated'`,
        [`asset-${result.code.assetId}`],
      );
      expect(sortedJson(event?.metadata), `event metadata of item ${result.index}`).toBe(sortedJson(sent));
    }
    const usedBefore = await generateUsed(account.key);
    expect(usedBefore).toBe(made.length);
    // The answer is lost (as a gateway killed before storing it leaves it): the keyed rerun through the other gateway.
    await sql('DELETE FROM idempotent_requests WHERE account_id = $1', [account.id]);
    const rerun = await api(1, 'POST', '/code/generate/batch', {
      key: account.key,
      headers: { 'idempotency-key': idempotencyKey },
      body: { items },
    });
    expect(rerun.status).toBe(200);
    expect(
      rerun.body.results.map((result: Json) => result.code?.assetId ?? result.error?.code),
      JSON.stringify(outcome),
    ).toEqual(first.body.results.map((result: Json) => result.code?.assetId ?? result.error?.code));
    expect(await generateUsed(account.key)).toBe(made.length);
  }, 60_000);
});

describe('a schema changed while a batch naming it is written', () => {
  it('every stored code’s event names a version its metadata matches; refused items name the version that refused them', async () => {
    const gtin = freshGtin();
    const account = await newAccount('starter', gtin);
    const created = await api(0, 'POST', '/schemas', {
      key: account.key,
      body: { name: 'Rev', vertical: 'review', fields: [{ name: 'name', type: 'string', required: true }] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const schemaId = created.body.id as string;
    const prefix = `RV-${randomUUID().slice(0, 6)}`;
    const items = Array.from({ length: 1000 }, (_, i) => ({
      gtin,
      serialNumber: `${prefix}-${i}`,
      schemaId,
      metadata: { name: 'x' },
    }));
    const batch = api(0, 'POST', '/code/generate/batch', { key: account.key, body: { items } });
    await new Promise((resolve) => setTimeout(resolve, 40));
    const patched = await api(1, 'PATCH', `/schemas/${schemaId}`, {
      key: account.key,
      body: {
        fields: [
          { name: 'name', type: 'string', required: true },
          { name: 'color', type: 'string', required: true },
        ],
      },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const answer = await batch;
    expect(answer.status).toBe(200);
    const made = answer.body.results.filter((result: Json) => result.code);
    for (const result of answer.body.results) {
      if (result.error)
        expect({ code: result.error.code, version: result.error.details?.schemaVersion }).toEqual({
          code: 'VALIDATION_ERROR',
          version: 2,
        });
    }
    const events = await sql(
      `SELECT data->>'schemaId' AS schema_id, (data->>'schemaVersion')::int AS version, count(*) AS n FROM event_log
        WHERE event_type = 'code.generated' AND data->>'serial' LIKE $1 GROUP BY 1, 2`,
      [`${prefix}-%`],
    );
    // The change may land before the batch's first chunk is checked (a loaded machine): then none is made.
    expect(events.map((row) => [row.schema_id, row.version, Number(row.n)])).toEqual(
      made.length > 0 ? [[schemaId, 1, made.length]] : [],
    );
    expect(await generateUsed(account.key)).toBe(made.length);
  }, 60_000);
});
