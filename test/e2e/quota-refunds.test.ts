import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { earlyInWindow } from '../support/client-address.ts';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';

// Quota is spent only for accepted work (#17): a batch whose items fail validation, a generate
// refused for a GTIN the account does not own or for a bad GTIN, gives its daily quota back. An
// auction object's registration (a signed link) spends the generate quota as a code does.

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let t: TestProduct;
let brand: string;
const gtin = '09506000134352';

const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(t.url, method, `/api/v1${path}`, options);

beforeAll(async () => {
  t = await startTestProduct();
  const operator = t.product.generatedOperatorKey as string;
  // A free tier: 100 generates a day.
  const created = await api('POST', '/accounts', { key: operator, body: { name: 'Free brand', tier: 'free' } });
  brand = created.body.apiKey.secret;
  await api('POST', `/accounts/${created.body.account.id}/gtins`, { key: operator, body: { gtin } });
});

afterAll(async () => {
  await t?.stop();
});

describe('quota spent only for accepted work', () => {
  it('gives back the quota of refused batch items and of refused generates, so the day’s 100 can all be made', async () => {
    // The quota counts per UTC day (the product's clock is the machine's here): every request in one day.
    await earlyInWindow(86_400_000, 30_000);
    // 100 items, 60 of them refused (a GTIN with a wrong check digit): 40 spent.
    const items = Array.from({ length: 100 }, (_, i) =>
      i < 40 ? { gtin, serialNumber: `OK-${i}` } : { gtin: '09506000134353', serialNumber: `BAD-${i}` },
    );
    const batch = await api('POST', '/code/generate/batch', { key: brand, body: { items } });
    expect(batch.status).toBe(200);
    expect(batch.body.results.filter((result: Json) => result.code)).toHaveLength(40);

    // Refused single generates: not owned, bad GTIN, duplicate serial.
    expect(
      (await api('POST', '/code/generate', { key: brand, body: { gtin: '04006381333931', serialNumber: 'X' } })).body.error?.code,
    ).toBe('GTIN_NOT_OWNED');
    expect((await api('POST', '/code/generate', { key: brand, body: { gtin: '123', serialNumber: 'X' } })).body.error?.code).toBe(
      'INVALID_GTIN',
    );
    expect((await api('POST', '/code/generate', { key: brand, body: { gtin, serialNumber: 'OK-0' } })).body.error?.code).toBe(
      'DUPLICATE_SERIAL',
    );

    // 58 more are accepted: the refused work spent nothing.
    const rest = Array.from({ length: 58 }, (_, i) => ({ gtin, serialNumber: `MORE-${i}` }));
    const second = await api('POST', '/code/generate/batch', { key: brand, body: { items: rest } });
    expect(second.status, JSON.stringify(second.body).slice(0, 300)).toBe(200);
    expect(second.body.results.filter((result: Json) => result.code)).toHaveLength(58);

    // An auction object's registration mints a signed link too: it spends the same quota (one a
    // registration), and a refused one gives it back. Otherwise a free account registered objects,
    // each a signed link with its own history, without limit.
    const refused = await api('POST', '/auction/objects/register', { key: brand, body: { title: '', category: 'watch' } });
    expect(refused.status).toBe(400);
    for (const title of ['Watch 1', 'Watch 2']) {
      const registered = await api('POST', '/auction/objects/register', { key: brand, body: { title, category: 'watch' } });
      expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    }

    // And the 101st is refused by the quota itself, a code or an object.
    const over = await api('POST', '/code/generate', { key: brand, body: { gtin, serialNumber: 'ONE-TOO-MANY' } });
    expect(over.status).toBe(429);
    expect(over.body.error?.details).toMatchObject({ limit: 'generate-per-day' });
    const overObject = await api('POST', '/auction/objects/register', {
      key: brand,
      body: { title: 'Watch 3', category: 'watch' },
    });
    expect(overObject.status).toBe(429);
    expect(overObject.body.error?.details).toMatchObject({ limit: 'generate-per-day' });
  });
});
