import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { call } from '../support/embedded.ts';

// Answers larger than one NATS message (max_payload, 1 MB by default) in the distributed form.
// A provenance history over it used to make auction-service throw out of its reply and exit, for
// every replica that tried, and an export page counted in characters could do the same to
// compliance-service: one GET by any tenant took the service down. They go in parts now.

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

describe('answers larger than one bus message (distributed form)', () => {
  let product: RunningProduct;
  let house: string;
  const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
    call<Json>(product.url, method, `/api/v1${path}`, options);

  beforeAll(async () => {
    product = await startDistributedProduct();
    const created = await api('POST', '/accounts', {
      key: product.operatorKey,
      body: { name: 'Large histories', tier: 'enterprise' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    house = created.body.apiKey.secret;
  });
  afterAll(() => product?.stop());

  it('reads, exports and verifies an object whose history is several MB, and the service stays up', async () => {
    const registered = await api('POST', '/auction/objects/register', {
      key: house,
      body: { title: 'Daytona 6263', category: 'watch', ownerId: 'client-large' },
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    const object = registered.body.object as Json;
    // 80 events of 15 KB of evidence (3 bytes a character in UTF-8): about 1.2 MB of history.
    const evidence = (index: number) => ({ report: `${'€'.repeat(5_000)}-${index}` });
    for (let index = 0; index < 80; index++) {
      const recorded = await api('POST', '/auction/provenance/events', {
        key: house,
        body: { objectId: object.id, eventType: 'cataloged', actorRole: 'auction_house', evidence: evidence(index) },
      });
      expect(recorded.status, JSON.stringify(recorded.body).slice(0, 300)).toBe(201);
    }

    const history = await api('GET', `/auction/objects/${object.id}/provenance`, { key: house });
    expect(history.status, JSON.stringify(history.body).slice(0, 300)).toBe(200);
    expect(history.body.chain_valid).toBe(true);
    expect(history.body.events).toHaveLength(81);
    expect(JSON.stringify(history.body.events.at(-1))).toContain(evidence(79).report);

    // The gateway reads the export page by page from compliance-service (pages of ~600 KB in UTF-8).
    const exported = await api('GET', `/compliance/${object.id}/export`, { key: house });
    expect(exported.status, JSON.stringify(exported.body).slice(0, 300)).toBe(200);
    expect(exported.body.events).toHaveLength(81);
    expect(exported.body.treeSize).toBe(81);

    // auction-service is still there: it answers the public verification and takes a new object.
    const verified = await api('GET', `/auction/public/verify/${object.service_serial}`);
    expect(verified.status, JSON.stringify(verified.body).slice(0, 300)).toBe(200);
    const another = await api('POST', '/auction/objects/register', {
      key: house,
      body: { title: 'Speedmaster 105.012', category: 'watch', ownerId: 'client-large' },
    });
    expect(another.status).toBe(201);
  });

  it('refuses evidence over 16 KiB (400) and a body too large to pass to the service (413), never a 500', async () => {
    const registered = await api('POST', '/auction/objects/register', {
      key: house,
      body: { title: 'Royal Oak 5402', category: 'watch', ownerId: 'client-large' },
    });
    const objectId = registered.body.object.id;
    const fat = await api('POST', '/auction/provenance/events', {
      key: house,
      body: { objectId, eventType: 'cataloged', evidence: { report: 'x'.repeat(17_000) } },
    });
    expect(fat.status, JSON.stringify(fat.body).slice(0, 300)).toBe(400);
    expect(fat.body.error?.details).toMatchObject({ fields: [{ field: 'evidence' }] });
    // Under the gateway's 1 MiB body limit, over one bus message with the request's envelope.
    const nearLimit = await api('POST', '/auction/provenance/events', {
      key: house,
      body: { objectId, eventType: 'cataloged', evidence: { report: 'x'.repeat(1_046_000) } },
    });
    expect(nearLimit.status, JSON.stringify(nearLimit.body).slice(0, 300)).toBe(413);
    expect(nearLimit.body.error?.code).toBe('PAYLOAD_TOO_LARGE');
  });
});
