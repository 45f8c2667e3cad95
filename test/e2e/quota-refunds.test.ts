import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { earlyInWindow } from '../support/client-address.ts';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';

// Quota is spent only for accepted work (#17): a batch whose items fail validation, a generate
// refused for a GTIN the account does not own or for a bad GTIN, gives its daily quota back.

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

    // 60 more are accepted: the refused work spent nothing.
    const rest = Array.from({ length: 60 }, (_, i) => ({ gtin, serialNumber: `MORE-${i}` }));
    const second = await api('POST', '/code/generate/batch', { key: brand, body: { items: rest } });
    expect(second.status, JSON.stringify(second.body).slice(0, 300)).toBe(200);
    expect(second.body.results.filter((result: Json) => result.code)).toHaveLength(60);

    // And the 101st is refused by the quota itself.
    const over = await api('POST', '/code/generate', { key: brand, body: { gtin, serialNumber: 'ONE-TOO-MANY' } });
    expect(over.status).toBe(429);
    expect(over.body.error?.details).toMatchObject({ limit: 'generate-per-day' });
  });
});
