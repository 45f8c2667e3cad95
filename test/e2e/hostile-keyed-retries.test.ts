// Keyed generates and the codes an earlier attempt stored (found by a review of the write side,
// 2026-12-04). A retry whose answer was lost is answered the codes its first attempt stored, however
// the facts changed since (a schema tightened, the GTIN revoked): before, it decided again and was
// refused, while the code existed and was paid for, and the refusal freed the key for another body.
// And a key used again after the gateway forgot it (24 hours) for another lot of the same serial
// derived the same asset id and was answered the earlier lot's code as made now; it is a taken serial.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let t: TestProduct;
let operator: string;

const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(t.url, method, `/api/v1${path}`, options);

async function account(name: string) {
  const created = await api('POST', '/accounts', { key: operator, body: { name, tier: 'enterprise' } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { id: created.body.account.id as string, key: created.body.apiKey.secret as string };
}

/** What a gateway killed before it stored its answer leaves: the key's stored answer gone, so a retry runs again. */
const loseStoredAnswers = () => t.product.db.query('DELETE FROM idempotent_requests');

beforeAll(async () => {
  t = await startTestProduct();
  operator = t.product.generatedOperatorKey as string;
}, 120_000);

afterAll(async () => {
  await t?.stop();
});

describe('a keyed generate whose answer was lost, retried after the facts it was decided on changed', () => {
  it('answers the code its first attempt stored, not VALIDATION_ERROR, after the schema changed', async () => {
    const brand = await account('Schema retry brand');
    const gtin = '09506000134352';
    expect((await api('POST', `/accounts/${brand.id}/gtins`, { key: operator, body: { gtin } })).status).toBe(201);
    const schema = await api('POST', '/schemas', {
      key: brand.key,
      body: { name: 'Bottle', vertical: 'luxury', fields: [{ name: 'name', type: 'string', required: true }] },
    });
    expect(schema.status, JSON.stringify(schema.body)).toBe(201);
    const body = { gtin, serialNumber: 'SCHEMA-RETRY-1', schemaId: schema.body.id, metadata: { name: 'Rouge' } };
    const headers = { 'idempotency-key': 'schema-retry-1' };

    const first = await api('POST', '/code/generate', { key: brand.key, body, headers });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    await loseStoredAnswers();
    // The brand adds a required field meanwhile: the stored code was checked against version 1.
    const patched = await api('PATCH', `/schemas/${schema.body.id}`, {
      key: brand.key,
      body: {
        fields: [
          { name: 'name', type: 'string', required: true },
          { name: 'volumeMl', type: 'integer', required: true },
        ],
      },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);

    const retry = await api('POST', '/code/generate', { key: brand.key, body, headers });
    // The code exists, is signed and verifies; the retry of the request that made it must say so.
    expect(retry.status, JSON.stringify(retry.body)).toBe(201);
    expect(retry.body).toEqual(first.body);
  });

  it('answers the code its first attempt stored, not GTIN_NOT_OWNED, after the grant was revoked', async () => {
    const brand = await account('Revoked retry brand');
    const gtin = '09506000134369';
    const grant = await api('POST', `/accounts/${brand.id}/gtins`, { key: operator, body: { gtin } });
    expect(grant.status).toBe(201);
    const body = { gtin, serialNumber: 'REVOKED-RETRY-1' };
    const headers = { 'idempotency-key': 'revoked-retry-1' };
    const first = await api('POST', '/code/generate', { key: brand.key, body, headers });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    await loseStoredAnswers();
    const revoked = await api('POST', `/gtins/${grant.body.id}/revoke`, { key: operator });
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    const retry = await api('POST', '/code/generate', { key: brand.key, body, headers });
    expect(retry.status, JSON.stringify(retry.body)).toBe(201);
    expect(retry.body).toEqual(first.body);
  });
});

describe('replays of a stored answer', () => {
  it('spend the account’s burst, and no daily quota: a leaked key cannot ask an answer again without end', async () => {
    const created = await api('POST', '/accounts', { key: operator, body: { name: 'Replayed brand', tier: 'free' } });
    const brand = { id: created.body.account.id as string, key: created.body.apiKey.secret as string };
    const gtin = '09506000134390';
    expect((await api('POST', `/accounts/${brand.id}/gtins`, { key: operator, body: { gtin } })).status).toBe(201);
    const usedToday = async () =>
      (await api('GET', '/usage', { key: brand.key })).body.quotas.find((quota: Json) => quota.name === 'generate').used;
    // Every request below falls in one second of the product's clock: the free tier's burst is 20.
    t.clock.freeze(new Date(Math.ceil(t.clock.now().getTime() / 1000) * 1000 + 100));
    const keyed = { key: brand.key, headers: { 'idempotency-key': 'replayed-42' }, body: { gtin, serialNumber: 'REPLAY-1' } };
    const first = await api('POST', '/code/generate', keyed);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    // Replays spent nothing: a key could ask a stored answer (a batch's: megabytes) as fast as it liked.
    const replays = await Promise.all(Array.from({ length: 30 }, () => api('POST', '/code/generate', keyed)));
    const replayed = replays.filter((answer) => answer.status === 201);
    const refused = replays.filter((answer) => answer.status === 429);
    expect([replayed.length, refused.length]).toEqual([19, 11]);
    for (const answer of replayed) {
      expect(answer.headers.get('idempotent-replayed')).toBe('true');
      expect(answer.body.assetId).toBe(first.body.assetId);
    }
    for (const answer of refused) {
      expect(answer.body.error).toMatchObject({ code: 'RATE_LIMITED', details: { limit: 'requests-per-second' } });
      expect(answer.headers.get('retry-after')).toBe('1');
    }
    // The next second replays again; the day's quota counted the one code once.
    t.clock.freeze(new Date(t.clock.now().getTime() + 1_000));
    const later = await api('POST', '/code/generate', keyed);
    expect([later.status, later.headers.get('idempotent-replayed')]).toEqual([201, 'true']);
    expect(await usedToday()).toBe(1);
    t.clock.freeze(undefined);
  });
});

// Last: it moves the product's clock a day on.
describe('an Idempotency-Key used again after its day, for another item of the same serial', () => {
  it('is not answered the earlier request’s code, with another lot, as made now', async () => {
    const brand = await account('Key reuse brand');
    const gtin = '09506000134383';
    expect((await api('POST', `/accounts/${brand.id}/gtins`, { key: operator, body: { gtin } })).status).toBe(201);
    const headers = { 'idempotency-key': 'label-run-42' };
    const first = await api('POST', '/code/generate', {
      key: brand.key,
      headers,
      body: { gtin, serialNumber: 'REUSE-1', batchNumber: 'LOT-A' },
    });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    t.clock.advance(86_400_000 + 1);
    // A day on the key is forgotten (docs/API.md): this is a new request, for lot B.
    const second = await api('POST', '/code/generate', {
      key: brand.key,
      headers,
      body: { gtin, serialNumber: 'REUSE-1', batchNumber: 'LOT-B' },
    });
    // Before: 201 with lot A's code (its link carries /10/LOT-A), answered as made for lot B and charged nothing.
    expect(second.status, JSON.stringify(second.body)).toBe(409);
    expect(second.body.error?.code).toBe('DUPLICATE_SERIAL');
  });
});
