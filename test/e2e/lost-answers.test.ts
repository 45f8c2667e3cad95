// A keyed photo upload whose answer was lost (the gateway killed before it stored it, so the
// Idempotency-Key's lease lapsed and the retry runs again) binds the photo once: the retry finds
// the binding its first attempt stored and answers it. Before, the retry recorded a second
// `photographed` event (a review of 2026-12-03, killing the product mid-upload): a duplicate in the
// exported evidence, `replaced: true` on a photo nobody replaced, its bytes counted twice toward the
// account's photo storage. Over real HTTP, in both forms; the lost answer is made by removing the
// gateway's stored one, as a kill before it was written leaves it. A keyed generate, batch or
// registration run again that way is answered what its first attempt made, and charged nothing more.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { earlyInWindow } from '../support/client-address.ts';
import { type RunningProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { call, startEmbeddedProduct } from '../support/embedded.ts';
import { picture } from '../support/pictures.ts';
import { withProductDatabase } from '../support/product-database.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let product: RunningProduct;
const gtin = '09506000134352';

const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(product.url, method, `/api/v1${path}`, options);

async function upload(key: string, objectId: string, angle: string, bytes: Buffer, idempotencyKey: string) {
  const form = new FormData();
  form.append('angle', angle);
  form.append('photo', new Blob([bytes], { type: 'image/jpeg' }), 'photo.jpg');
  const response = await fetch(`${product.url}/api/v1/auction/objects/${objectId}/photos`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'idempotency-key': idempotencyKey },
    body: form,
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Json };
}

/** Forgets every stored Idempotency-Key answer, as a gateway killed before it stored them leaves it. */
async function loseStoredAnswers(): Promise<void> {
  await withProductDatabase(product, (query) => query('DELETE FROM idempotent_requests'));
}

describe.each([
  ['embedded', startEmbeddedProduct],
  ['distributed', () => startDistributedProduct()],
])('a keyed request whose answer was lost (%s form)', (_form, start: () => Promise<RunningProduct>) => {
  beforeAll(async () => {
    product = await start();
  });
  afterAll(async () => {
    await product?.stop();
  });

  it('binds the photo once: the retry answers the stored binding', async () => {
    const created = await api('POST', '/accounts', { key: product.operatorKey, body: { name: 'House', tier: 'enterprise' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const house = created.body.apiKey.secret as string;
    const registered = await api('POST', '/auction/objects/register', {
      key: house,
      body: { title: 'Watch', category: 'watch' },
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    const objectId = registered.body.object.id as string;
    const photo = await picture(41);

    const first = await upload(house, objectId, 'dial', photo, 'upload-dial-1');
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    await loseStoredAnswers();
    const retry = await upload(house, objectId, 'dial', photo, 'upload-dial-1');
    expect(retry.status, JSON.stringify(retry.body)).toBe(201);
    // Not the gateway's replay (its answer is gone): the service's stored binding.
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(retry.body).toMatchObject({ sha256: first.body.sha256, angle: 'dial', replaced: false });

    const history = await api('GET', `/auction/objects/${objectId}/provenance`, { key: house });
    expect(history.status, JSON.stringify(history.body)).toBe(200);
    const photographed = JSON.stringify(history.body).split('"photographed"').length - 1;
    expect(photographed, JSON.stringify(history.body)).toBe(1);
  });

  it('charges a rerun nothing for what its first attempt made and paid for: codes, a batch and an object', async () => {
    // A free account: 100 generates a UTC day, an object's registration one of them. Before, each
    // rerun was charged again (a batch of 40 rerun counted as 80), so the day's 100 ran out at 60.
    await earlyInWindow(86_400_000, 60_000);
    const created = await api('POST', '/accounts', { key: product.operatorKey, body: { name: 'Free brand', tier: 'free' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const brand = created.body.apiKey.secret as string;
    const granted = await api('POST', `/accounts/${created.body.account.id}/gtins`, { key: product.operatorKey, body: { gtin } });
    expect(granted.status, JSON.stringify(granted.body)).toBe(201);
    const keyed = (key: string) => ({ key: brand, headers: { 'idempotency-key': key } });

    const batch = { items: Array.from({ length: 40 }, (_, i) => ({ gtin, serialNumber: `LOST-B-${i}` })) };
    const one = { gtin, serialNumber: 'LOST-ONE' };
    const object = { title: 'Watch', category: 'watch' };
    const firsts = [
      await api('POST', '/code/generate/batch', { ...keyed('lost-batch'), body: batch }),
      await api('POST', '/code/generate', { ...keyed('lost-one'), body: one }),
      await api('POST', '/auction/objects/register', { ...keyed('lost-object'), body: object }),
    ];
    await loseStoredAnswers();
    const reruns = [
      await api('POST', '/code/generate/batch', { ...keyed('lost-batch'), body: batch }),
      await api('POST', '/code/generate', { ...keyed('lost-one'), body: one }),
      await api('POST', '/auction/objects/register', { ...keyed('lost-object'), body: object }),
    ];
    for (const [index, rerun] of reruns.entries()) {
      expect(rerun.status, JSON.stringify(rerun.body)).toBe(firsts[index]?.status);
      // Not the gateway's replay (its answer is gone): the services' stored codes and object, and nothing of how they knew.
      expect(rerun.headers.get('idempotent-replayed')).toBeNull();
      expect(rerun.body).toEqual(firsts[index]?.body);
    }
    // 42 spent by the first attempts, none by the reruns: the other 58 of the day can be made.
    const rest = { items: Array.from({ length: 58 }, (_, i) => ({ gtin, serialNumber: `LOST-REST-${i}` })) };
    const more = await api('POST', '/code/generate/batch', { key: brand, body: rest });
    expect(more.status, JSON.stringify(more.body).slice(0, 300)).toBe(200);
    expect(more.body.results.filter((result: Json) => result.code)).toHaveLength(58);
    const over = await api('POST', '/code/generate', { key: brand, body: { gtin, serialNumber: 'LOST-OVER' } });
    expect(over.status, JSON.stringify(over.body)).toBe(429);
    expect(over.body.error?.details).toMatchObject({ limit: 'generate-per-day' });
  });
});
