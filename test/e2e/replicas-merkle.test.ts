// Replicas (a review of replicas and kills, 2026-12-04; these held): provenance events appended through two gateways to objects while compliance-service
// replicas are killed (SIGKILL) and restarted: after the projections catch up, each object's Merkle
// root is the RFC 9162 root of its chained events (no leaf twice, none missing), and its chain checks.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DistributedProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { call } from '../support/embedded.ts';
import { waitFor } from '../support/wait.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let product: DistributedProduct;
const api = (url: string, method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(url, method, `/api/v1${path}`, options);
const gateway = (i: number) => (product.gatewayUrls as string[])[i % 2] as string;

const sha = (...parts: Buffer[]) => createHash('sha256').update(Buffer.concat(parts)).digest();
function mth(leaves: Buffer[]): Buffer {
  if (leaves.length === 1) return sha(Buffer.from([0]), leaves[0] as Buffer);
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return sha(Buffer.from([1]), mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}

describe('Merkle trees while compliance-service replicas are killed', () => {
  beforeAll(async () => {
    product = await startDistributedProduct({}, { gateways: 2, replicas: { 'compliance-service': 2 } });
  }, 120_000);
  afterAll(async () => {
    await product?.stop();
  }, 60_000);

  it('keeps every object’s root equal to the root of its events after kills and restarts', async () => {
    const created = await api(product.url, 'POST', '/accounts', {
      key: product.operatorKey,
      body: { name: 'Merkle house', tier: 'enterprise' },
    });
    const house = created.body.apiKey.secret as string;
    const objects: string[] = [];
    for (let i = 0; i < 4; i++) {
      const registered = await api(gateway(i), 'POST', '/auction/objects/register', {
        key: house,
        body: { title: `Merkle lot ${i}`, category: 'painting' },
      });
      expect(registered.status, JSON.stringify(registered.body)).toBe(201);
      objects.push(registered.body.object.id);
    }
    let stop = false;
    const killer = (async () => {
      for (let round = 0; round < 3 && !stop; round++) {
        await new Promise((resolve) => setTimeout(resolve, 400));
        await product.kill(`compliance-service-${(round % 2) + 1}`);
        await new Promise((resolve) => setTimeout(resolve, 300));
        await product.restart(`compliance-service-${(round % 2) + 1}`);
      }
    })();
    const statuses: number[] = [];
    await Promise.all(
      objects.map(async (objectId, o) => {
        for (let n = 0; n < 25; n++) {
          const answer = await api(gateway(n + o), 'POST', '/auction/provenance/events', {
            key: house,
            body: { objectId, eventType: 'cataloged', actorRole: 'auction_house', description: `note ${n}` },
          });
          statuses.push(answer.status);
        }
      }),
    );
    stop = true;
    await killer;
    // Recording an event needs the compliance config (fails closed while compliance is down): count what was stored.
    for (const objectId of objects) {
      const exported = await waitFor(
        `the export of ${objectId}`,
        async () => {
          const answer = await api(gateway(0), 'GET', `/compliance/${objectId}/export?format=json`, { key: house });
          return answer.status === 200 ? answer : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 500 },
      );
      const events = exported.body.events as Json[];
      const verified = await api(gateway(1), 'GET', `/compliance/${objectId}/verify`, { key: house });
      expect(verified.body, JSON.stringify(verified.body)).toMatchObject({ isValid: true, eventCount: events.length });
      expect(events.map((event) => event.leafIndex)).toEqual(events.map((_, i) => i));
      const root = await api(gateway(1), 'GET', `/compliance/${objectId}/merkle/root`, { key: house });
      expect(root.body.treeSize).toBe(events.length);
      const expected = mth(events.map((event) => Buffer.from(event.hash, 'hex'))).toString('hex');
      expect(root.body.rootHash, JSON.stringify({ statuses: statuses.length })).toBe(expected);
    }
  }, 180_000);
});
