import { leafHash, verifyInclusion } from '@hallmark/merkle';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDistributedProduct } from '../support/distributed-product.ts';
import { call, startTestProduct } from '../support/embedded.ts';

// Issue #17, "Read your writes": once a write has answered 2xx, every read of the same asset
// through the API (Merkle root, proof, export, chain check) includes it, in both forms.

interface Product {
  url: string;
  operatorKey: string;
  stop(): Promise<void>;
}

const gtin = '09506000134376';
const hex = (value: string) => Buffer.from(value, 'hex');

/** The first few disagreements, and how many there were: the count is what the issue reports. */
function mismatches() {
  const seen: string[] = [];
  return {
    note(what: string) {
      seen.push(what);
    },
    get count() {
      return seen.length;
    },
    get sample() {
      return seen.slice(0, 5).join('\n');
    },
  };
}

function client(product: Product) {
  return (method: string, path: string, options: { key?: string; body?: unknown } = {}) =>
    // biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
    call<Record<string, any>>(product.url, method, `/api/v1${path}`, options);
}

/** An auction house and a brand that owns `gtin` (granted by the operator, docs/SIGNING.md). */
async function tenants(product: Product) {
  const api = client(product);
  const account = async (name: string) => {
    const created = await api('POST', '/accounts', { key: product.operatorKey, body: { name, tier: 'enterprise' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return { id: created.body.account.id as string, key: created.body.apiKey.secret as string };
  };
  const house = await account('Read-your-writes house');
  const brand = await account('Read-your-writes brand');
  const grant = await api('POST', `/accounts/${brand.id}/gtins`, { key: product.operatorKey, body: { gtin } });
  expect(grant.status, JSON.stringify(grant.body)).toBe(201);
  return { house: house.key, brand: brand.key };
}

/**
 * Records `events` provenance events round-robin on `objects` new objects, one lane per object at
 * once; right after each 201,
 * reads the object's root and the new event's proof (and, every `fullEvery` events, its export
 * and chain check), and notes each read that does not include the write.
 */
async function provenanceRound(product: Product, house: string, objects: number, events: number, fullEvery: number) {
  const api = client(product);
  const wrong = mismatches();
  const registered: Array<{ id: string; size: number }> = [];
  for (let i = 0; i < objects; i += 1) {
    const created = await api('POST', '/auction/objects/register', {
      key: house,
      body: { title: `Read-your-writes lot ${i}`, category: 'watch' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    registered.push({ id: created.body.object.id, size: 1 });
  }
  // One lane per object, all at once: each lane writes its object's events one after another (so the
  // object's size is known at every read), while the other objects' writes and reads go on beside it.
  const lane = async (first: number) => {
    for (let n = first; n < events; n += objects) await oneEvent(n);
  };
  const oneEvent = async (n: number) => {
    const object = registered[n % objects] as { id: string; size: number };
    const written = await api('POST', '/auction/provenance/events', {
      key: house,
      body: { objectId: object.id, eventType: 'exhibited', actorRole: 'auction_house', description: `show ${n}` },
    });
    expect(written.status, JSON.stringify(written.body)).toBe(201);
    object.size += 1;
    const { eventId, hash } = written.body as { eventId: string; hash: string };

    const root = await api('GET', `/compliance/${object.id}/merkle/root`, { key: house });
    if (root.status !== 200 || root.body.treeSize !== object.size) {
      wrong.note(`root after event ${object.size} of ${object.id}: ${root.status} treeSize ${root.body.treeSize}`);
    }
    const proof = await api('GET', `/compliance/${object.id}/merkle/proof?eventId=${eventId}`, { key: house });
    if (
      proof.status !== 200 ||
      proof.body.treeSize !== object.size ||
      proof.body.leafHash !== leafHash(hex(hash)).toString('hex') ||
      !verifyInclusion(
        proof.body.leafIndex,
        proof.body.treeSize,
        hex(proof.body.leafHash),
        (proof.body.auditPath as string[]).map(hex),
        hex(proof.body.rootHash),
      )
    ) {
      wrong.note(
        `proof of event ${object.size} of ${object.id}: ${proof.status} ${proof.body.error?.code ?? proof.body.treeSize}`,
      );
    }
    if (n % fullEvery === fullEvery - 1) {
      const exported = await api('GET', `/compliance/${object.id}/export?format=json`, { key: house });
      const last = exported.body.events?.at(-1);
      if (exported.status !== 200 || exported.body.treeSize !== object.size || last?.eventId !== eventId) {
        wrong.note(`export after event ${object.size} of ${object.id}: ${exported.status} treeSize ${exported.body.treeSize}`);
      }
      const verified = await api('GET', `/compliance/${object.id}/verify`, { key: house });
      if (verified.status !== 200 || verified.body.eventCount !== object.size || verified.body.headHash !== hash) {
        wrong.note(`verify after event ${object.size} of ${object.id}: ${verified.status} ${verified.body.eventCount}`);
      }
      const history = await api('GET', `/auction/objects/${object.id}/provenance`, { key: house });
      if (history.status !== 200 || history.body.events?.length !== object.size || history.body.chain_valid !== true) {
        wrong.note(`provenance history after event ${object.size} of ${object.id}: ${history.status}`);
      }
    }
  };
  await Promise.all(registered.map((_, first) => lane(first)));
  return wrong;
}

/**
 * Generates `codes` codes, four at a time; right after each 201 reads its root (one leaf: the code’s first event),
 * and every tenth also its export and a stranger’s read.
 */
async function codeRound(product: Product, brand: string, codes: number, label: string, stranger: string) {
  const api = client(product);
  const wrong = mismatches();
  const lanes = 4;
  const lane = async (first: number) => {
    for (let n = first; n < codes; n += lanes) await oneCode(n);
  };
  const oneCode = async (n: number) => {
    const created = await api('POST', '/code/generate', {
      key: brand,
      body: { gtin, serialNumber: `RYW-${label}-${n}`, batchNumber: 'B1' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const assetId = created.body.assetId as string;
    const root = await api('GET', `/compliance/${assetId}/merkle/root`, { key: brand });
    if (root.status !== 200 || root.body.treeSize !== 1) {
      wrong.note(`root of new code ${assetId}: ${root.status} treeSize ${root.body.treeSize}`);
    }
    if (n % 10 === 9) {
      // Another account's fresh asset is still just unknown to a stranger: 404, not 503, at once.
      const foreign = await api('GET', `/compliance/${assetId}/merkle/root`, { key: stranger });
      if (foreign.status !== 404) wrong.note(`a stranger's read of new code ${assetId}: ${foreign.status}`);
      const exported = await api('GET', `/compliance/${assetId}/export?format=json`, { key: brand });
      if (exported.status !== 200 || exported.body.events?.length !== 1) {
        wrong.note(`export of new code ${assetId}: ${exported.status}`);
      }
    }
  };
  // Four lanes at once, each code followed at once by its own reads.
  await Promise.all(Array.from({ length: lanes }, (_, first) => lane(first)));
  return wrong;
}

describe('read your writes, embedded', () => {
  let product: Product;
  let keys: { house: string; brand: string };
  beforeAll(async () => {
    const t = await startTestProduct({ HALLMARK_LOG_LEVEL: 'warn' });
    product = { url: t.url, operatorKey: t.product.generatedOperatorKey as string, stop: () => t.stop() };
    keys = await tenants(product);
  });
  afterAll(async () => {
    await product?.stop();
  });

  it('1,000 provenance events, each followed at once by a root and a proof that include it', async () => {
    const wrong = await provenanceRound(product, keys.house, 8, 1_000, 50);
    expect(wrong.count, wrong.sample).toBe(0);
  }, 600_000);

  it('generated codes, each followed at once by its root', async () => {
    const wrong = await codeRound(product, keys.brand, 300, 'embedded', keys.house);
    expect(wrong.count, wrong.sample).toBe(0);
  }, 300_000);
});

describe('read your writes, distributed', () => {
  let product: Product;
  let keys: { house: string; brand: string };
  beforeAll(async () => {
    // Two compliance-service replicas: both run the projection, and a read may reach the one that did not project.
    product = await startDistributedProduct({}, { replicas: { 'compliance-service': 2 } });
    keys = await tenants(product);
  });
  afterAll(async () => {
    await product?.stop();
  });

  it('1,000 writes (events and codes), each followed at once by reads that include it', async () => {
    const events = await provenanceRound(product, keys.house, 8, 800, 50);
    const codes = await codeRound(product, keys.brand, 200, 'distributed', keys.house);
    expect(events.count + codes.count, `${events.sample}\n${codes.sample}`).toBe(0);
  }, 600_000);
});

describe('read your writes, while the projection cannot write', () => {
  let t: Awaited<ReturnType<typeof startTestProduct>>;
  let product: Product;
  let keys: { house: string; brand: string };
  beforeAll(async () => {
    t = await startTestProduct({ HALLMARK_LOG_LEVEL: 'error', HALLMARK_PROJECTION_WAIT_MS: '300' });
    product = { url: t.url, operatorKey: t.product.generatedOperatorKey as string, stop: () => t.stop() };
    keys = await tenants(product);
  });
  afterAll(async () => {
    await product?.stop();
  });

  it('answers 503 with Retry-After, never an older history, and the event once the projection is back', async () => {
    const api = client(product);
    const created = await api('POST', '/auction/objects/register', {
      key: keys.house,
      body: { title: 'Stalled lot', category: 'watch' },
    });
    const objectId = created.body.object.id as string;
    const code = await api('POST', '/code/generate', { key: keys.brand, body: { gtin, serialNumber: 'RYW-STALL-0' } });
    expect(code.status).toBe(201);
    expect((await api('GET', `/compliance/${objectId}/merkle/root`, { key: keys.house })).body.treeSize).toBe(1);
    expect((await api('GET', `/compliance/${code.body.assetId}/merkle/root`, { key: keys.brand })).body.treeSize).toBe(1);

    // Every batch of the projection now fails (it retries each second): new leaves are refused.
    await t.product.db.query('ALTER TABLE provenance_events ADD CONSTRAINT stalled CHECK (leaf_index < 0) NOT VALID');
    const written = await api('POST', '/auction/provenance/events', {
      key: keys.house,
      body: { objectId, eventType: 'exhibited', actorRole: 'auction_house' },
    });
    expect(written.status).toBe(201);
    for (const path of [
      'merkle/root',
      `merkle/proof?eventId=${written.body.eventId}`,
      'export',
      'verify',
      'merkle/consistency?from=1',
    ]) {
      const answer = await api('GET', `/compliance/${objectId}/${path}`, { key: keys.house });
      expect(answer.status, `${path}: ${JSON.stringify(answer.body)}`).toBe(503);
      expect(answer.body.error?.code).toBe('SERVICE_UNAVAILABLE');
      expect(answer.headers.get('retry-after'), path).toBe('1');
    }
    // An asset with nothing unprojected still answers at once.
    const other = await api('GET', `/compliance/${code.body.assetId}/merkle/root`, { key: keys.brand });
    expect(other.status).toBe(200);
    expect(other.body.treeSize).toBe(1);

    await t.product.db.query('ALTER TABLE provenance_events DROP CONSTRAINT stalled');
    // The projection retries within a second; until then 503, never the older root.
    const deadline = Date.now() + 10_000;
    for (;;) {
      const root = await api('GET', `/compliance/${objectId}/merkle/root`, { key: keys.house });
      if (root.status === 200) {
        expect(root.body.treeSize).toBe(2);
        break;
      }
      expect(root.status).toBe(503);
      expect(Date.now()).toBeLessThan(deadline);
    }
  });
});
