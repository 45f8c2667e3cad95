// Another tenant learning which serials a brand issued (a review of 2026-12-03, confirmed over
// HTTP): after the brand rotated its signing key, `POST /code/verify` of a forged signature named,
// in `checks.signature.keyId`, the retired key for a serial the brand had issued before the rotation
// and the active key for any other, so anyone with a key could walk the brand's serial space. The
// public page already said nothing that differs (docs/RESOLVER.md). Now a failed signature names
// the signer's newest active key, whatever the serial. Over real HTTP, embedded form.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let t: TestProduct;
const gtin = '09506000134352';
const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(t.url, method, `/api/v1${path}`, options);

beforeAll(async () => {
  t = await startTestProduct();
});
afterAll(async () => {
  await t?.stop();
});

describe('a forged signature of a serial the brand issued, and of one it never issued', () => {
  it('is answered alike, naming the same key, after the brand rotated its signing key', async () => {
    const operator = t.product.generatedOperatorKey as string;
    const tenant = async (name: string) => {
      const created = await api('POST', '/accounts', { key: operator, body: { name, tier: 'enterprise' } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      return { key: created.body.apiKey.secret as string, id: created.body.account.id as string };
    };
    const brand = await tenant('Brand');
    const other = await tenant('Another tenant');
    expect((await api('POST', `/accounts/${brand.id}/gtins`, { key: operator, body: { gtin } })).status).toBe(201);
    const code = await api('POST', '/code/generate', { key: brand.key, body: { gtin, serialNumber: 'ISSUED-1' } });
    expect(code.status, JSON.stringify(code.body)).toBe(201);
    const rotated = await api('POST', '/keys/signing/rotate', { key: brand.key, body: {} });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(201);
    expect(rotated.body.id).not.toBe(code.body.keyId);

    const signature = /sig=([^&]+)/.exec(code.body.url)?.[1] as string;
    const forgedSignature = `${signature.slice(0, 10)}${signature[10] === 'A' ? 'B' : 'A'}${signature.slice(11)}`;
    const verifyForged = async (serial: string) => {
      const answer = await api('POST', '/code/verify', {
        key: other.key,
        body: { url: `https://x.example/01/${gtin}/21/${serial}?sig=${forgedSignature}` },
      });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body.verdict).toBe('COUNTERFEIT');
      return answer.body.checks.signature;
    };
    const issued = await verifyForged('ISSUED-1');
    const neverIssued = await verifyForged('NEVER-1');
    expect(issued).toEqual(neverIssued);
    // The brand's newest active key, not the retired key ISSUED-1 was signed with.
    expect(issued).toMatchObject({ passed: false, keyId: rotated.body.id });
    // The genuine code still verifies under the key it was signed with.
    const genuine = await api('POST', '/code/verify', { key: other.key, body: { url: code.body.url } });
    expect(genuine.body.checks.signature).toMatchObject({ passed: true, keyId: code.body.keyId });
  });
});
