import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { maxActivePublicKeys } from '@hallmark/accounts';
import { signCode } from '@hallmark/codes';
import { ed25519PrivateKeyObject, ed25519Thumbprint, generateEd25519KeyPair, open, parseMasterKey } from '@hallmark/crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call, startTestProduct, type TestProduct } from '../support/embedded.ts';
import { publicKeyRegistration } from '../support/public-keys.ts';
import { waitFor } from '../support/wait.ts';

// The keys a code may be signed with, against a leaked narrow key, a leaked signing key once rotated
// out, and a tenant that registers keys without end, over real HTTP (embedded form: its data folder
// holds the master key, so the test can play the thief who has a signing key's private half).

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
    const body = publicKeyRegistration(thief, { accountId: brand.id }, 'my HSM');
    const refused = await api('POST', '/keys', { key: keysOnly, body });
    expectError(refused, 403, 'INSUFFICIENT_SCOPE');
    expect(refused.body.error?.details?.required).toEqual(['*']);
    const forged = linkOf(ed25519Thumbprint(thief.publicKey), ed25519PrivateKeyObject(thief), 'THIEF-1');
    expect(await verdictOf(forged)).toBe('KEY_NOT_FOUND');

    // The account's `*` key may: the same kind of link then verifies, and only `*` takes the key away again.
    const factory = generateEd25519KeyPair();
    const registered = await api('POST', '/keys', {
      key: brand.key,
      body: publicKeyRegistration(factory, { accountId: brand.id }),
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

  it('answers a serial nobody issued COUNTERFEIT though a signing key rotated out signed it; what that key signed stays AUTHENTIC', async () => {
    const issued = await api('POST', '/code/generate', { key: brand.key, body: { gtin, serialNumber: 'REAL-1' } });
    expect(issued.status, JSON.stringify(issued.body)).toBe(201);
    const oldKid = issued.body.keyId as string;
    const object = await api('POST', '/auction/objects/register', {
      key: brand.key,
      body: { title: 'Clock', category: 'watch' },
    });
    expect(object.status, JSON.stringify(object.body)).toBe(201);
    const objectId = object.body.object.id as string;
    // The object is on record in verify-service's directory (its code projection takes objects too) before the rotation.
    await waitFor('the object in the code directory', async () => {
      const rows = await test.product.db.query('SELECT 1 FROM code_directory WHERE asset_id = $1', [objectId]);
      return rows.length === 1 ? true : undefined;
    });
    expect((await api('POST', '/keys/signing/rotate', { key: brand.key })).status).toBe(201);
    // The thief has the old key's private half (here from the data folder's master key).
    const masterKey = parseMasterKey(await readFile(join(test.dataDir, 'master.key'), 'utf8'));
    const [row] = await test.product.db.query<{ public_key: string; sealed_private_key: string }>(
      'SELECT public_key, sealed_private_key FROM verification_keys WHERE id = $1',
      [oldKid],
    );
    const stolen = ed25519PrivateKeyObject({
      publicKey: Buffer.from(row?.public_key ?? '', 'base64url'),
      privateKey: open(masterKey, Buffer.from(row?.sealed_private_key ?? '', 'base64url'), `hallmark:signing-key:${oldKid}`),
    });
    expect(await verdictOf(linkOf(oldKid, stolen, 'NEVER-ISSUED-1'))).toBe('COUNTERFEIT');
    expect(await verdictOf(issued.body.url)).toBe('AUTHENTIC');
    expect(await verdictOf(object.body.qr_data.gs1DigitalLink)).toBe('AUTHENTIC');
  });

  it(`holds at most ${maxActivePublicKeys} active public keys an account, also against registrations at once`, async () => {
    const created = await api('POST', '/accounts', { key: operatorKey(), body: { name: 'Many keys', tier: 'enterprise' } });
    const key = created.body.apiKey.secret as string;
    const register = () =>
      api('POST', '/keys', {
        key,
        body: publicKeyRegistration(generateEd25519KeyPair(), { accountId: created.body.account.id }, 'printer'),
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
