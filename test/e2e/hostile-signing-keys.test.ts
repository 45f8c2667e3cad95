import { maxActivePublicKeys } from '@hallmark/accounts';
import { signCode } from '@hallmark/codes';
import { ed25519PrivateKeyObject, ed25519Thumbprint, generateEd25519KeyPair } from '@hallmark/crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call, startTestProduct, type TestProduct } from '../support/embedded.ts';

// The keys a code may be signed with, against a leaked narrow key and a tenant that registers keys
// without end, over real HTTP.

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

const gtin = '09506000134352';

function expectError(response: ApiResponse, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error?.code).toBe(code);
}

describe('who may add the keys that make a code AUTHENTIC', () => {
  let test: TestProduct;
  let brand: { id: string; key: string };
  let keysOnly: string;
  const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
    call<Json>(test.url, method, `/api/v1${path}`, options);
  const operatorKey = () => test.product.generatedOperatorKey as string;
  const linkOf = (kid: string, privateKey: Parameters<typeof signCode>[0], serial: string) =>
    `https://brand.example/01/${gtin}/21/${serial}?sig=${signCode(privateKey, { kid, gtin, serial })}`;
  const verdictOf = async (url: string) => {
    const answer = await api('POST', '/code/verify', { key: brand.key, body: { url } });
    return answer.status === 200 ? answer.body.verdict : answer.body.error?.code;
  };

  beforeAll(async () => {
    test = await startTestProduct();
    const created = await api('POST', '/accounts', { key: operatorKey(), body: { name: 'Maison', tier: 'enterprise' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    brand = { id: created.body.account.id, key: created.body.apiKey.secret };
    expect((await api('POST', `/accounts/${brand.id}/gtins`, { key: operatorKey(), body: { gtin } })).status).toBe(201);
    const narrow = await api('POST', '/keys', { key: brand.key, body: { name: 'key manager', scopes: ['keys:write'] } });
    expect(narrow.status, JSON.stringify(narrow.body)).toBe(201);
    keysOnly = narrow.body.secret;
  }, 60_000);

  afterAll(async () => {
    await test?.stop();
  });

  it('refuses a key without * to register or revoke a public key; its forged codes stay unverified', async () => {
    const thief = generateEd25519KeyPair();
    const body = { name: 'my HSM', publicKey: thief.publicKey.toString('base64url'), algorithm: 'Ed25519' };
    const refused = await api('POST', '/keys', { key: keysOnly, body });
    expectError(refused, 403, 'INSUFFICIENT_SCOPE');
    expect(refused.body.error?.details?.required).toEqual(['*']);
    const forged = linkOf(ed25519Thumbprint(thief.publicKey), ed25519PrivateKeyObject(thief), 'THIEF-1');
    expect(await verdictOf(forged)).toBe('KEY_NOT_FOUND');

    // The account's `*` key may: the same kind of link then verifies, and only `*` takes the key away again.
    const factory = generateEd25519KeyPair();
    const registered = await api('POST', '/keys', {
      key: brand.key,
      body: { name: 'factory HSM', publicKey: factory.publicKey.toString('base64url'), algorithm: 'Ed25519' },
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    const printed = linkOf(registered.body.id, ed25519PrivateKeyObject(factory), 'FACTORY-1');
    expect(await verdictOf(printed)).toBe('AUTHENTIC');
    expectError(await api('POST', `/keys/${registered.body.id}/revoke`, { key: keysOnly }), 403, 'INSUFFICIENT_SCOPE');
    expect(await verdictOf(printed)).toBe('AUTHENTIC');
    expect((await api('POST', `/keys/${registered.body.id}/revoke`, { key: brand.key })).status).toBe(200);
    // The account has no other key (it has made no code yet): no key could have signed it.
    expect(await verdictOf(printed)).toBe('KEY_NOT_FOUND');
  });

  it(`holds at most ${maxActivePublicKeys} active public keys an account, also against registrations at once`, async () => {
    const created = await api('POST', '/accounts', { key: operatorKey(), body: { name: 'Many keys', tier: 'enterprise' } });
    const key = created.body.apiKey.secret as string;
    const register = () =>
      api('POST', '/keys', {
        key,
        body: { name: 'printer', publicKey: generateEd25519KeyPair().publicKey.toString('base64url'), algorithm: 'Ed25519' },
      });
    const answers = await Promise.all(Array.from({ length: maxActivePublicKeys + 5 }, register));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(maxActivePublicKeys);
    const refusal = answers.find((answer) => answer.status === 409) as ApiResponse;
    expectError(refusal, 409, 'CONFLICT');
    expect(refusal.body.error?.details).toEqual({ limit: maxActivePublicKeys });
    // A revoked key frees its place.
    const first = answers.find((answer) => answer.status === 201) as ApiResponse;
    expect((await api('POST', `/keys/${first.body.id}/revoke`, { key })).status).toBe(200);
    expect((await register()).status).toBe(201);
    expectError(await register(), 409, 'CONFLICT');
  });
});
