import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { type ApiResponse, call, startEmbeddedProduct } from '../support/embedded.ts';

// Data of test and live keys never mix (spec DECISIONS.md), over real HTTP in both forms: a test
// key, even the operator's with `*`, or a console session switched to test, neither sees nor
// changes who owns a GTIN in live, and cannot create accounts (docs/API.md, "GTIN ownership" and
// "Accounts").

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

function expectError(response: ApiResponse, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error?.code).toBe(code);
}

const liveOnly = { required: 'environment:live', granted: 'environment:test' };
const gtinOfBrand = '09506000134352'; // under the brand's live prefix 9506000
const freeGtin = '05901234123457';
const anotherFreeGtin = '04006381333931';

describe.each([
  ['embedded', () => startEmbeddedProduct({ HALLMARK_SELF_SERVICE_TEST_CLAIMS: 'true' })],
  ['distributed', () => startDistributedProduct({ HALLMARK_SELF_SERVICE_TEST_CLAIMS: 'true' })],
])('test keys stay in test (%s form)', (_form, start) => {
  let product: RunningProduct;
  let brand: { id: string; liveKey: string; sandboxKey: string };
  let liveClaim: Json;
  let printedCode: string;
  const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
    call<Json>(product.url, method, `/api/v1${path}`, options);
  const newKey = async (creator: string, scopes: string[], environment: 'live' | 'test') => {
    const created = await api('POST', '/keys', { key: creator, body: { name: `${environment} key`, scopes, environment } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.secret as string;
  };
  const verdictOfPrintedCode = async () =>
    (await api('POST', '/code/verify', { key: product.operatorKey, body: { url: printedCode } })).body.verdict;
  const liveClaimStatus = async () =>
    (await api('GET', `/accounts/${brand.id}/gtins`, { key: product.operatorKey })).body.claims.find(
      (claim: Json) => claim.id === liveClaim.id,
    )?.status;

  beforeAll(async () => {
    product = await start();
    const created = await api('POST', '/accounts', { key: product.operatorKey, body: { name: 'Maison', tier: 'enterprise' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const liveKey = created.body.apiKey.secret as string;
    brand = { id: created.body.account.id, liveKey, sandboxKey: await newKey(liveKey, ['assets:create', 'assets:read'], 'test') };
    const grant = await api('POST', `/accounts/${brand.id}/gtins`, { key: product.operatorKey, body: { prefix: '9506000' } });
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);
    liveClaim = grant.body;
    expect(liveClaim).toMatchObject({ environment: 'live', status: 'active' });
    const code = await api('POST', '/code/generate', { key: liveKey, body: { gtin: gtinOfBrand, serialNumber: 'PRINTED-1' } });
    expect(code.status, JSON.stringify(code.body)).toBe(201);
    printedCode = code.body.url;
    expect(await verdictOfPrintedCode()).toBe('AUTHENTIC');
  }, 120_000);

  afterAll(async () => {
    await product?.stop();
  });

  it('answers a sandbox key’s revocation of a live claim 404 like an unknown id, and lists it only test claims', async () => {
    const live = await api('POST', `/gtins/${liveClaim.id}/revoke`, { key: brand.sandboxKey });
    const unknown = await api('POST', '/gtins/gtc_00000000000000000000/revoke', { key: brand.sandboxKey });
    expectError(live, 404, 'NOT_FOUND');
    expectError(unknown, 404, 'NOT_FOUND');
    expect(live.body.error?.message).toBe(unknown.body.error?.message);
    expect(await liveClaimStatus()).toBe('active');
    expect(await verdictOfPrintedCode()).toBe('AUTHENTIC');

    const listed = await api('GET', '/gtins', { key: brand.sandboxKey });
    expect(listed.status).toBe(200);
    expect(listed.body.claims).toEqual([]);

    // Its own test claim it sees and gives up; the live key neither sees nor touches that one.
    const claimed = await api('POST', '/gtins', { key: brand.sandboxKey, body: { gtin: freeGtin } });
    expect(claimed.status, JSON.stringify(claimed.body)).toBe(201);
    expect((await api('GET', '/gtins', { key: brand.sandboxKey })).body.claims.map((claim: Json) => claim.id)).toEqual([
      claimed.body.id,
    ]);
    expect((await api('GET', '/gtins', { key: brand.liveKey })).body.claims.map((claim: Json) => claim.id)).toEqual([
      liveClaim.id,
    ]);
    expectError(await api('POST', `/gtins/${claimed.body.id}/revoke`, { key: brand.liveKey }), 404, 'NOT_FOUND');
    const givenUp = await api('POST', `/gtins/${claimed.body.id}/revoke`, { key: brand.sandboxKey });
    expect(givenUp.status, JSON.stringify(givenUp.body)).toBe(200);
    expect(givenUp.body).toMatchObject({ environment: 'test', status: 'revoked' });
  });

  it('refuses the operator’s `*` test key live acts: accounts, live grants, live revocations', async () => {
    const operatorTest = await newKey(product.operatorKey, ['*'], 'test');
    expect(operatorTest).toMatch(/^svc_test_/);

    for (const body of [
      { name: 'Unlimited', tier: 'enterprise' },
      { name: 'Sandbox', tier: 'free', environment: 'test' },
    ]) {
      const account = await api('POST', '/accounts', { key: operatorTest, body });
      expectError(account, 403, 'INSUFFICIENT_SCOPE');
      expect(account.body.error?.details).toEqual(liveOnly);
    }

    const liveGrant = await api('POST', `/accounts/${brand.id}/gtins`, {
      key: operatorTest,
      body: { gtin: anotherFreeGtin, environment: 'live' },
    });
    expectError(liveGrant, 403, 'INSUFFICIENT_SCOPE');
    expect(liveGrant.body.error?.details).toEqual(liveOnly);

    // Nor can it see the live claim, or take it away.
    const listed = await api('GET', `/accounts/${brand.id}/gtins`, { key: operatorTest });
    expect(listed.status).toBe(200);
    expect(listed.body.claims.map((claim: Json) => claim.id)).not.toContain(liveClaim.id);
    expectError(await api('POST', `/gtins/${liveClaim.id}/revoke`, { key: operatorTest }), 404, 'NOT_FOUND');
    expect(await liveClaimStatus()).toBe('active');
    expect(await verdictOfPrintedCode()).toBe('AUTHENTIC');

    // What stays allowed: the list of accounts, and test claims (its default environment), granted and taken away.
    expect((await api('GET', '/accounts', { key: operatorTest })).status).toBe(200);
    const testGrant = await api('POST', `/accounts/${brand.id}/gtins`, { key: operatorTest, body: { gtin: anotherFreeGtin } });
    expect(testGrant.status, JSON.stringify(testGrant.body)).toBe(201);
    expect(testGrant.body).toMatchObject({ environment: 'test', source: 'granted' });
    const takenAway = await api('POST', `/gtins/${testGrant.body.id}/revoke`, { key: operatorTest });
    expect(takenAway.status, JSON.stringify(takenAway.body)).toBe(200);

    // The operator's live key keeps its powers: both environments of every account.
    const all = await api('GET', `/accounts/${brand.id}/gtins`, { key: product.operatorKey });
    expect(all.body.claims.map((claim: Json) => claim.environment)).toEqual(expect.arrayContaining(['live', 'test']));
  });

  it('refuses the same to the operator’s console session switched to test', async () => {
    const signIn = await api('POST', '/sessions', { body: { apiKey: product.operatorKey } });
    expect(signIn.status, JSON.stringify(signIn.body)).toBe(201);
    const token = /^hallmark_session=([0-9a-f]{64});/.exec(signIn.headers.get('set-cookie') ?? '')?.[1];
    const asSession = (method: string, path: string, body?: unknown) =>
      api(method, path, {
        ...(body !== undefined ? { body } : {}),
        headers: { cookie: `hallmark_session=${token}`, 'x-hallmark-console': '1' },
      });
    expect((await asSession('PATCH', '/sessions/current', { environment: 'test' })).status).toBe(200);

    const account = await asSession('POST', '/accounts', { name: 'Unlimited', tier: 'enterprise' });
    expectError(account, 403, 'INSUFFICIENT_SCOPE');
    expect(account.body.error?.details).toEqual(liveOnly);
    expectError(
      await asSession('POST', `/accounts/${brand.id}/gtins`, { gtin: anotherFreeGtin, environment: 'live' }),
      403,
      'INSUFFICIENT_SCOPE',
    );
    expectError(await asSession('POST', `/gtins/${liveClaim.id}/revoke`), 404, 'NOT_FOUND');
    expect(await liveClaimStatus()).toBe('active');
    expect(await verdictOfPrintedCode()).toBe('AUTHENTIC');
  });
});
