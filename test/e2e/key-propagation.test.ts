import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { call } from '../support/embedded.ts';

// A rotated signing key reaches every replica at once (#17): with two code-service replicas, every
// code generated after the rotation's answer is signed with the new key, not only the codes of the
// replica that rotated. Each replica used to keep the old key for up to 30 s.

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

describe('signing key rotation across replicas (distributed form)', () => {
  let product: RunningProduct;
  let brand: string;
  const api = (method: string, path: string, key: string, body?: unknown) =>
    call<Json>(product.url, method, `/api/v1${path}`, { key, ...(body !== undefined ? { body } : {}) });
  let serial = 0;
  const generate = async () => {
    const created = await api('POST', '/code/generate', brand, { gtin: '09506000134352', serialNumber: `ROT-${++serial}` });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body as { keyId: string; url: string };
  };

  beforeAll(async () => {
    product = await startDistributedProduct({}, { replicas: { 'code-service': 2 } });
    const created = await api('POST', '/accounts', product.operatorKey, { name: 'Rotating brand', tier: 'enterprise' });
    brand = created.body.apiKey.secret;
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
});
