// Replicas (a review of replicas and kills, 2026-12-04; these held): transfers with three auction-service replicas behind two gateways. Racing initiations for
// two buyers, racing confirms with the right code: one transfer, one sale, one owner, a chain that checks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DistributedProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { call } from '../support/embedded.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let product: DistributedProduct;
let house: string;
const api = (url: string, method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(url, method, `/api/v1${path}`, options);
const gateway = (i: number) => (product.gatewayUrls as string[])[i % 2] as string;

describe('transfers raced across auction-service replicas', () => {
  beforeAll(async () => {
    product = await startDistributedProduct({}, { gateways: 2, replicas: { 'auction-service': 3 } });
    const created = await api(product.url, 'POST', '/accounts', {
      key: product.operatorKey,
      body: { name: 'Race house', tier: 'enterprise' },
    });
    expect(created.status).toBe(201);
    house = created.body.apiKey.secret;
  }, 120_000);
  afterAll(async () => {
    await product?.stop();
  }, 60_000);

  it('starts one transfer for racing initiations to two buyers, and hands the object over once for racing right codes', async () => {
    for (const round of [1, 2, 3]) {
      const registered = await api(gateway(round), 'POST', '/auction/objects/register', {
        key: house,
        body: { title: `Race lot ${round}`, category: 'watch', ownerId: 'client-jane' },
      });
      expect(registered.status, JSON.stringify(registered.body)).toBe(201);
      const objectId = registered.body.object.id as string;
      const initiations = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          api(gateway(i), 'POST', '/auction/transfers/initiate', {
            key: house,
            body: { objectId, fromOwnerId: 'client-jane', toOwnerId: `buyer-${i % 2}`, salePrice: 100 + i, saleCurrency: 'EUR' },
          }),
        ),
      );
      const started = initiations.filter((answer) => answer.status === 201);
      expect(started.length, JSON.stringify(initiations.map((answer) => [answer.status, answer.body.error?.code]))).toBe(1);
      const { transferId, transferCode } = (started[0] as { body: Json }).body;
      const confirms = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          api(gateway(i), 'POST', `/auction/transfers/${transferId}/confirm`, { key: house, body: { transferCode } }),
        ),
      );
      const tally = JSON.stringify(confirms.map((answer) => [answer.status, answer.body.error?.code]));
      expect(confirms.filter((answer) => answer.status === 200).length, tally).toBe(1);
      const history = await api(gateway(0), 'GET', `/auction/objects/${objectId}/provenance`, { key: house });
      expect(history.status).toBe(200);
      const types = history.body.events.map((event: Json) => event.type);
      expect(types).toEqual(['registered', 'transfer_initiated', 'sold', 'transferred']);
      expect(history.body.chain_valid).toBe(true);
      const verified = await api(gateway(1), 'GET', `/compliance/${objectId}/verify`, { key: house });
      expect(verified.body, JSON.stringify(verified.body)).toMatchObject({ isValid: true, eventCount: 4 });
      // A new sale of a sold object by its old owner is refused.
      const again = await api(gateway(0), 'POST', '/auction/transfers/initiate', {
        key: house,
        body: { objectId, fromOwnerId: 'client-jane', toOwnerId: 'buyer-9', salePrice: 1, saleCurrency: 'EUR' },
      });
      expect(again.status, JSON.stringify(again.body)).not.toBe(201);
    }
  }, 120_000);
});
