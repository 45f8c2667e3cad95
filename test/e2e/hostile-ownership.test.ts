import { type JsonWebKeySet, verifyOffline } from '@hallmark/client';
import { signCode } from '@hallmark/codes';
import { ed25519PrivateKeyObject, ed25519Thumbprint, generateEd25519KeyPair } from '@hallmark/crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { type ApiResponse, call, startEmbeddedProduct } from '../support/embedded.ts';
import { publicKeyRegistration } from '../support/public-keys.ts';

// Account B (a counterfeiter who opened an account) against account A (the brand), over real HTTP,
// in both forms: nobody but a GTIN's owner can make one of its codes verify.

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

function expectError(response: ApiResponse, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error?.code).toBe(code);
}

const gtinA = '09506000134352'; // under A's company prefix 9506000
const gtinUnowned = '04006381333931';

describe.each([
  ['embedded', () => startEmbeddedProduct({ HALLMARK_SELF_SERVICE_TEST_CLAIMS: 'true' })],
  ['distributed', () => startDistributedProduct({ HALLMARK_SELF_SERVICE_TEST_CLAIMS: 'true' })],
])('GTIN ownership against a hostile tenant (%s form)', (_form, start) => {
  let product: RunningProduct;
  let a: { id: string; key: string };
  let b: { id: string; key: string };
  let verifier: string;
  const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
    call<Json>(product.url, method, `/api/v1${path}`, options);
  const tenant = async (name: string, environment: 'live' | 'test' = 'live') => {
    const created = await api('POST', '/accounts', { key: product.operatorKey, body: { name, tier: 'enterprise', environment } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return { id: created.body.account.id as string, key: created.body.apiKey.secret as string };
  };
  const jwks = async () =>
    (await (await fetch(`${product.url}/.well-known/jwks.json`)).json()) as JsonWebKeySet & { keys: Json[] };

  beforeAll(async () => {
    product = await start();
    a = await tenant('Maison A');
    b = await tenant('Counterfeiter B');
    verifier = (await tenant('Retailer')).key;
    const grant = await api('POST', `/accounts/${a.id}/gtins`, { key: product.operatorKey, body: { prefix: '9506000' } });
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);
    expect(grant.body).toMatchObject({
      accountId: a.id,
      kind: 'prefix',
      value: '9506000',
      environment: 'live',
      status: 'active',
    });
  }, 120_000);

  afterAll(async () => {
    await product?.stop();
  });

  it('refuses B a code for A’s GTIN, alone or in a batch, even for a serial A never used', async () => {
    const single = await api('POST', '/code/generate', { key: b.key, body: { gtin: gtinA, serialNumber: 'FAKE-1' } });
    expectError(single, 403, 'GTIN_NOT_OWNED');
    expect(single.body.error?.details).toEqual({ gtin: gtinA });
    const batch = await api('POST', '/code/generate/batch', {
      key: b.key,
      body: {
        items: [
          { gtin: gtinA, serialNumber: 'FAKE-2' },
          { gtin: '09506000134369', serialNumber: 'FAKE-3' },
        ],
      },
    });
    expect(batch.status).toBe(200);
    expect(batch.body.results.map((result: Json) => result.error?.code)).toEqual(['GTIN_NOT_OWNED', 'GTIN_NOT_OWNED']);
    // A, the owner, may; and so may the operator for a GTIN nobody owns, but not for A's.
    expect((await api('POST', '/code/generate', { key: a.key, body: { gtin: gtinA, serialNumber: 'REAL-1' } })).status).toBe(201);
    expect(
      (await api('POST', '/code/generate', { key: product.operatorKey, body: { gtin: gtinUnowned, serialNumber: 'OP-1' } }))
        .status,
    ).toBe(201);
    expectError(
      await api('POST', '/code/generate', { key: product.operatorKey, body: { gtin: gtinA, serialNumber: 'OP-2' } }),
      403,
      'GTIN_NOT_OWNED',
    );
  });

  it('answers COUNTERFEIT, online and offline, for A’s GTIN signed by a key B registered and holds', async () => {
    const pair = generateEd25519KeyPair();
    const registered = await api('POST', '/keys', {
      key: b.key,
      body: publicKeyRegistration(pair, { accountId: b.id }, 'my own HSM'),
    });
    expect(registered.status).toBe(201);
    const kid = ed25519Thumbprint(pair.publicKey);
    const signature = signCode(ed25519PrivateKeyObject(pair), { kid, gtin: gtinA, serial: 'FAKE-9' });
    const forged = `https://brand.example/01/${gtinA}/21/FAKE-9?sig=${signature}`;
    // Whoever asks (B included), only A's keys count for A's GTIN.
    for (const key of [verifier, b.key]) {
      const online = await api('POST', '/code/verify', { key, body: { url: forged } });
      expect(online.status).toBe(200);
      expect(online.body).toMatchObject({ verdict: 'COUNTERFEIT', checks: { signature: { passed: false } } });
    }
    const offline = verifyOffline(forged, await jwks());
    expect(offline).toMatchObject({
      valid: false,
      reason: expect.stringContaining(`account ${b.id}, which may not sign GTIN ${gtinA}`),
    });
  });

  it('publishes whose each key is and what it may sign for', async () => {
    await api('POST', '/code/generate', { key: a.key, body: { gtin: gtinA, serialNumber: 'REAL-2' } });
    const keys = (await jwks()).keys;
    const ofA = keys.filter((key) => key.hallmark_account === a.id);
    expect(ofA.length).toBeGreaterThan(0);
    for (const key of ofA) expect(key).toMatchObject({ hallmark_gtin_prefixes: ['9506000'], hallmark_gtins: [] });
    for (const key of keys.filter((key) => key.hallmark_account === b.id)) {
      expect(key).toMatchObject({ hallmark_gtin_prefixes: [], hallmark_gtins: [] });
      expect(key.hallmark_signs_unowned).toBeUndefined();
    }
    expect(keys.some((key) => key.hallmark_signs_unowned === true)).toBe(true);
  });

  it('refuses overlapping grants, self-service claims outside test, and another tenant’s claims', async () => {
    for (const body of [{ prefix: '9506' }, { prefix: '95060001' }, { gtin: gtinA }]) {
      const overlapping = await api('POST', `/accounts/${b.id}/gtins`, { key: product.operatorKey, body });
      expectError(overlapping, 409, 'CONFLICT');
    }
    expectError(await api('POST', '/gtins', { key: b.key, body: { gtin: gtinA } }), 403, 'GTIN_CLAIM_NOT_ALLOWED');
    expectError(
      await api('POST', `/accounts/${b.id}/gtins`, { key: b.key, body: { gtin: '05901234123457' } }),
      403,
      'INSUFFICIENT_SCOPE',
    );
    expectError(
      await api('POST', `/accounts/acc_00000000000000000000/gtins`, {
        key: product.operatorKey,
        body: { gtin: '05901234123457' },
      }),
      404,
      'NOT_FOUND',
    );
    expectError(
      await api('POST', `/accounts/${b.id}/gtins`, { key: product.operatorKey, body: { gtin: '09506000134353' } }),
      400,
      'INVALID_GTIN',
    );
    expectError(
      await api('POST', `/accounts/${b.id}/gtins`, { key: product.operatorKey, body: { gtin: gtinA, prefix: '9506000' } }),
      400,
      'VALIDATION_ERROR',
    );
    // B sees only its own claims, and cannot revoke A's: the same answer as for a claim that does not exist.
    const listedByA = await api('GET', '/gtins', { key: a.key });
    const claimOfA = listedByA.body.claims[0];
    expect(claimOfA).toMatchObject({ accountId: a.id, value: '9506000' });
    expect((await api('GET', '/gtins', { key: b.key })).body.claims).toEqual([]);
    const foreign = await api('POST', `/gtins/${claimOfA.id}/revoke`, { key: b.key });
    const missing = await api('POST', '/gtins/gtc_00000000000000000000/revoke', { key: b.key });
    expectError(foreign, 404, 'NOT_FOUND');
    expectError(missing, 404, 'NOT_FOUND');
    expect(foreign.body.error?.message).toBe(missing.body.error?.message);
    expect((await api('GET', '/gtins', { key: a.key })).body.claims[0].status).toBe('active');
  });

  it('lets a test key claim a free GTIN for the test environment only, when the operator allows it', async () => {
    const sandbox = await tenant('Sandbox B', 'test');
    expectError(await api('POST', '/gtins', { key: sandbox.key, body: { gtin: gtinA } }), 409, 'CONFLICT');
    const claimed = await api('POST', '/gtins', { key: sandbox.key, body: { gtin: '05901234123457' } });
    expect(claimed.status, JSON.stringify(claimed.body)).toBe(201);
    expect(claimed.body).toMatchObject({ environment: 'test', source: 'claimed' });
    expect(
      (await api('POST', '/code/generate', { key: sandbox.key, body: { gtin: '05901234123457', serialNumber: 'T-1' } })).status,
    ).toBe(201);
    // A test claim gives nothing in live.
    expectError(
      await api('POST', '/code/generate', { key: b.key, body: { gtin: '05901234123457', serialNumber: 'T-1' } }),
      403,
      'GTIN_NOT_OWNED',
    );
  });

  it('stops counting an owner’s codes the moment its GTIN is taken away, and again once granted back', async () => {
    const prefixOwner = await tenant('Short-lived brand');
    const grant = await api('POST', `/accounts/${prefixOwner.id}/gtins`, {
      key: product.operatorKey,
      body: { gtin: '09506001234563' },
    });
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);
    const code = await api('POST', '/code/generate', {
      key: prefixOwner.key,
      body: { gtin: '09506001234563', serialNumber: 'R-1' },
    });
    expect(code.status, JSON.stringify(code.body)).toBe(201);
    expect((await api('POST', '/code/verify', { key: verifier, body: { url: code.body.url } })).body.verdict).toBe('AUTHENTIC');
    const revoked = await api('POST', `/gtins/${grant.body.id}/revoke`, { key: product.operatorKey });
    expect(revoked.body).toMatchObject({ status: 'revoked', revokedAt: expect.any(String) });
    // Every replica hears of it over the bus: the next verification already knows.
    expect((await api('POST', '/code/verify', { key: verifier, body: { url: code.body.url } })).body.verdict).toBe('COUNTERFEIT');
    expect(verifyOffline(code.body.url, await jwks()).valid).toBe(false);
    expectError(
      await api('POST', '/code/generate', { key: prefixOwner.key, body: { gtin: '09506001234563', serialNumber: 'R-2' } }),
      403,
      'GTIN_NOT_OWNED',
    );
    await api('POST', `/accounts/${prefixOwner.id}/gtins`, { key: product.operatorKey, body: { gtin: '09506001234563' } });
    expect((await api('POST', '/code/verify', { key: verifier, body: { url: code.body.url } })).body.verdict).toBe('AUTHENTIC');
    expect(verifyOffline(code.body.url, await jwks()).valid).toBe(true);
  });
});
