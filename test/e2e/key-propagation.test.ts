import { generateEd25519KeyPair } from '@hallmark/crypto';
import { createPostgresDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { call } from '../support/embedded.ts';
import { publicKeyRegistration } from '../support/public-keys.ts';

// A rotated signing key reaches every replica at once (#17): with two code-service replicas, every
// code generated after the rotation's answer is signed with the new key, not only the codes of the
// replica that rotated. Each replica used to keep the old key for up to 30 s. And a change whose
// broadcast never came (plain SQL here, as an operator's or a lost message) reaches every replica's
// caches within a second, through the cache epochs checked on each use.

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

describe('signing key rotation across replicas (distributed form)', () => {
  let product: RunningProduct;
  let brand: string;
  let brandAccount: string;
  const api = (method: string, path: string, key: string, body?: unknown) =>
    call<Json>(product.url, method, `/api/v1${path}`, { key, ...(body !== undefined ? { body } : {}) });
  let serial = 0;
  const generate = async () => {
    const created = await api('POST', '/code/generate', brand, { gtin: '09506000134352', serialNumber: `ROT-${++serial}` });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body as { keyId: string; url: string };
  };

  beforeAll(async () => {
    product = await startDistributedProduct({}, { gateways: 2, replicas: { 'code-service': 2 } });
    const created = await api('POST', '/accounts', product.operatorKey, { name: 'Rotating brand', tier: 'enterprise' });
    brand = created.body.apiKey.secret;
    brandAccount = created.body.account.id;
    await api('POST', `/accounts/${created.body.account.id}/gtins`, product.operatorKey, { gtin: '09506000134352' });
  }, 120_000);

  afterAll(async () => {
    await product?.stop();
  });

  it('signs every code made after the rotation’s answer with the new key, on both replicas', async () => {
    // Both replicas serve generates and cache the first key.
    const before = await Promise.all(Array.from({ length: 20 }, generate));
    const firstKid = before[0]?.keyId;
    expect(new Set(before.map((code) => code.keyId))).toEqual(new Set([firstKid]));

    for (let round = 0; round < 3; round++) {
      const rotated = await api('POST', '/keys/signing/rotate', brand);
      expect(rotated.status).toBe(201);
      const after = await Promise.all(Array.from({ length: 20 }, generate));
      expect(after.map((code) => code.keyId)).toEqual(after.map(() => rotated.body.id));
      // Codes of the retired keys keep verifying.
      for (const code of [before[0], after[0]]) {
        expect((await api('POST', '/code/verify', brand, { url: code?.url })).body.verdict).toBe('AUTHENTIC');
      }
    }
  });

  it('a public key registered through one gateway is in every gateway’s key set in its answer’s wake', async () => {
    const [first, second] = product.gatewayUrls ?? [];
    if (!first || !second) throw new Error('two gateways expected');
    const jwksOf = async (url: string) => {
      const response = await call<{ keys: Array<{ kid: string }> }>(url, 'GET', '/.well-known/jwks.json');
      expect(response.status).toBe(200);
      return response.body.keys.map((key) => key.kid);
    };
    for (let round = 0; round < 5; round++) {
      // The second gateway has built (and keeps) its key set.
      await jwksOf(second);
      const registered = await call<Json>(first, 'POST', '/api/v1/keys', {
        key: brand,
        body: publicKeyRegistration(generateEd25519KeyPair(), { accountId: brandAccount }, `line ${round}`),
      });
      expect(registered.status, JSON.stringify(registered.body)).toBe(201);
      // It heard of the registration within milliseconds of the answer: the broadcast is sent before
      // the answer, but nothing orders its arrival at the second gateway before this request's, so
      // it has 150 ms. Without the broadcast the key set was stale until the cache epoch came round
      // (polled every 500 ms, so up to a second): five rounds within 150 ms each do not happen that way.
      const deadline = Date.now() + 150;
      let kids = await jwksOf(second);
      while (!kids.includes(registered.body.id) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        kids = await jwksOf(second);
      }
      expect(kids).toContain(registered.body.id);
    }
  });

  /** A change made straight in the product's database: no service hears of it over the bus. */
  async function sql(text: string, params: unknown[]) {
    const db = createPostgresDatabase({ connectionString: product.databaseUrl as string, applicationName: 'test-epochs' });
    try {
      await db.query(text, params);
    } finally {
      await db.close();
    }
  }

  /** Polls `request` until `done` says so; the milliseconds it took (fails past 5 s). */
  async function secondsUntil(request: () => Promise<{ status: number }>, done: (status: number) => boolean) {
    const started = Date.now();
    for (;;) {
      if (done((await request()).status)) return Date.now() - started;
      if (Date.now() - started > 5_000) throw new Error('the change did not arrive within 5 s');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  it('an API key revoked without a broadcast is refused by every gateway within a second', async () => {
    const made = await api('POST', '/keys', brand, { name: 'soon revoked', scopes: ['assets:read'] });
    expect(made.status).toBe(201);
    const secret = made.body.secret as string;
    const urls = product.gatewayUrls ?? [product.url];
    for (const url of urls) {
      expect((await call(url, 'GET', '/api/v1/code/reports?limit=1', { key: secret })).status).toBe(200);
    }
    await sql('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [made.body.id]);
    for (const url of urls) {
      const tookMs = await secondsUntil(
        () => call(url, 'GET', '/api/v1/code/reports?limit=1', { key: secret }),
        (status) => status === 401,
      );
      expect(tookMs).toBeLessThan(1_500);
    }
  });

  it('a GTIN claim revoked without a broadcast stops generation on both code-service replicas within a second', async () => {
    const gtin = '09506000134369';
    expect((await api('POST', `/accounts/${brandAccount}/gtins`, product.operatorKey, { gtin })).status).toBe(201);
    // Both replicas cache the brand as the GTIN's signer.
    for (let i = 0; i < 6; i++) {
      const made = await api('POST', '/code/generate', brand, { gtin, serialNumber: `EPOCH-${i}` });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
    }
    await sql('UPDATE gtin_claims SET revoked_at = now() WHERE value = $1 AND revoked_at IS NULL', [gtin]);
    // Requests spread over both replicas (the queue group): wait until six in a row are refused.
    const started = Date.now();
    let refusedInARow = 0;
    let attempt = 0;
    while (refusedInARow < 6) {
      const made = await api('POST', '/code/generate', brand, { gtin, serialNumber: `EPOCH-LATE-${++attempt}` });
      refusedInARow = made.status === 403 ? refusedInARow + 1 : 0;
      if (Date.now() - started > 5_000) throw new Error('generation was still accepted 5 s after the claim was revoked');
    }
    expect(Date.now() - started).toBeLessThan(1_500);
  });
});
