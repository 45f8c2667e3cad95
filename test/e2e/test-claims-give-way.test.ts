import type { JsonWebKeySet } from '@hallmark/client';
import { gs1CheckDigit } from '@hallmark/gs1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { type ApiResponse, call, startEmbeddedProduct } from '../support/embedded.ts';

// A sandbox key cannot squat a brand's GTINs (docs/SECURITY.md, "GTIN ownership"): where the
// operator allows self-service test claims, a tenant's test claim on a prefix of a brand not yet
// onboarded gives way to the operator's live grant of it, which revokes it in the grant's
// transaction; every replica hears of it as of a revocation. Other overlaps still refuse the grant.

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

function expectError(response: ApiResponse, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error?.code).toBe(code);
}

/** A GTIN-14 under a company prefix: indicator 0, the prefix, the item reference, the check digit. */
const gtinUnder = (prefix: string, item: number) => {
  const digits = `0${prefix}${String(item).padStart(12 - prefix.length, '0')}`;
  return `${digits}${gs1CheckDigit(digits)}`;
};

const squattedPrefix = '7622210';
const squattedGtin = gtinUnder(squattedPrefix, 1); // 07622210000019
const anotherSquattedGtin = gtinUnder(squattedPrefix, 2); // 07622210000026
const grantedPrefix = '8410076';
const grantedGtin = gtinUnder(grantedPrefix, 1); // 08410076000019
const liveGrantedPrefix = '6291041';

describe.each([
  ['embedded', () => startEmbeddedProduct({ HALLMARK_SELF_SERVICE_TEST_CLAIMS: 'true' })],
  ['distributed', () => startDistributedProduct({ HALLMARK_SELF_SERVICE_TEST_CLAIMS: 'true' })],
])('self-service test claims give way to a live grant (%s form)', (_form, start) => {
  let product: RunningProduct;
  let squatter: { id: string; testKey: string };
  let brand: { id: string; liveKey: string; testKey: string };
  let other: { id: string; liveKey: string };
  const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
    call<Json>(product.url, method, `/api/v1${path}`, options);
  const account = async (name: string, environment: 'live' | 'test') => {
    const created = await api('POST', '/accounts', { key: product.operatorKey, body: { name, tier: 'enterprise', environment } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return { id: created.body.account.id as string, key: created.body.apiKey.secret as string };
  };
  const generate = (key: string, gtin: string, serialNumber: string) =>
    api('POST', '/code/generate', { key, body: { gtin, serialNumber } });
  const verdict = async (key: string, url: string) => {
    const verified = await api('POST', '/code/verify', { key, body: { url } });
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);
    return verified.body.verdict as string;
  };
  const jwks = async () =>
    (await (await fetch(`${product.url}/.well-known/jwks.json`)).json()) as JsonWebKeySet & { keys: Json[] };

  beforeAll(async () => {
    product = await start();
    const sandbox = await account('Sandbox squatter', 'test');
    expect(sandbox.key).toMatch(/^svc_test_/);
    squatter = { id: sandbox.id, testKey: sandbox.key };
    const late = await account('Brand onboarding late', 'live');
    const brandTest = await api('POST', '/keys', {
      key: late.key,
      body: { name: 'sandbox', scopes: ['assets:create', 'assets:read', 'assets:verify'], environment: 'test' },
    });
    expect(brandTest.status, JSON.stringify(brandTest.body)).toBe(201);
    brand = { id: late.id, liveKey: late.key, testKey: brandTest.body.secret };
    const onboarded = await account('Brand onboarded', 'live');
    other = { id: onboarded.id, liveKey: onboarded.key };
  }, 120_000);

  afterAll(async () => {
    await product?.stop();
  });

  it('keeps GS1’s restricted-circulation range (2) for auction objects: no claim or grant takes any of it, so none blocks a registration', async () => {
    // A sandbox key's test claims over 2000–2999 would have covered every object's GTIN (02 + 11
    // digits): every live registration was a 409 naming the squatter's prefix.
    for (const body of [{ prefix: '2918' }, { prefix: '2' }, { gtin: '02000000000015' }]) {
      const claimed = await api('POST', '/gtins', { key: squatter.testKey, body });
      expect(claimed.status, JSON.stringify(claimed.body)).toBe(400);
      expect(claimed.body.error).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: { fields: [{ field: Object.keys(body)[0], in: 'body' }] },
      });
      const granted = await api('POST', `/accounts/${other.id}/gtins`, { key: product.operatorKey, body });
      expect(granted.status, JSON.stringify(granted.body)).toBe(400);
    }
    const registered = await api('POST', '/auction/objects/register', {
      key: brand.liveKey,
      body: { title: 'Watch', category: 'watch' },
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    // The operator naming an account that does not exist is told so, as its grant would be.
    const unknown = await api('GET', '/accounts/acc_doesnotexist/gtins', { key: product.operatorKey });
    expect(unknown.status, JSON.stringify(unknown.body)).toBe(404);
    expect(unknown.body.error?.code).toBe('NOT_FOUND');
  });

  it('revokes a sandbox’s test claim when the operator grants its prefix live, and moves signing and verification to the brand', async () => {
    // The squatter claims a prefix nobody owns yet, with its test key, and signs a code under it.
    const squatted = await api('POST', '/gtins', { key: squatter.testKey, body: { prefix: squattedPrefix } });
    expect(squatted.status, JSON.stringify(squatted.body)).toBe(201);
    expect(squatted.body).toMatchObject({ accountId: squatter.id, environment: 'test', source: 'claimed', status: 'active' });
    const squattersCode = await generate(squatter.testKey, squattedGtin, 'SQUAT-1');
    expect(squattersCode.status, JSON.stringify(squattersCode.body)).toBe(201);
    expect(await verdict(brand.testKey, squattersCode.body.url)).toBe('AUTHENTIC');
    expectError(await generate(brand.testKey, squattedGtin, 'TOO-EARLY'), 403, 'GTIN_NOT_OWNED');

    // The operator grants the brand the prefix live: not blocked by the test claim.
    const grant = await api('POST', `/accounts/${brand.id}/gtins`, {
      key: product.operatorKey,
      body: { prefix: squattedPrefix },
    });
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);
    // The answer is the grant, as every grant's is (docs/API.md): the same resource the lists show.
    expect(Object.keys(grant.body).sort()).toEqual(
      ['accountId', 'createdAt', 'environment', 'id', 'kind', 'revokedAt', 'source', 'status', 'value'].sort(),
    );
    expect(grant.body).toMatchObject({
      accountId: brand.id,
      kind: 'prefix',
      value: squattedPrefix,
      environment: 'live',
      source: 'granted',
      status: 'active',
    });

    // The squatter sees its claim revoked, at the grant's moment; it has no active claim left.
    const listed = await api('GET', '/gtins', { key: squatter.testKey });
    expect(listed.status).toBe(200);
    expect(listed.body.claims).toEqual([{ ...squatted.body, status: 'revoked', revokedAt: grant.body.createdAt }]);
    expect((await api('GET', '/gtins?status=active', { key: squatter.testKey })).body.claims).toEqual([]);
    const asOperator = await api('GET', `/accounts/${squatter.id}/gtins?status=revoked`, { key: product.operatorKey });
    expect(asOperator.body.claims.map((claim: Json) => claim.id)).toEqual([squatted.body.id]);

    // Its test key signs under the prefix no more; nor can it claim the prefix or a GTIN under it back.
    const refused = await generate(squatter.testKey, anotherSquattedGtin, 'SQUAT-2');
    expectError(refused, 403, 'GTIN_NOT_OWNED');
    expect(refused.body.error?.details).toEqual({ gtin: anotherSquattedGtin });
    for (const body of [{ prefix: squattedPrefix }, { gtin: anotherSquattedGtin }]) {
      const again = await api('POST', '/gtins', { key: squatter.testKey, body });
      expectError(again, 409, 'CONFLICT');
      expect(again.body.error?.details?.conflictsWith).toEqual([{ kind: 'prefix', value: squattedPrefix, environment: 'live' }]);
    }

    // The brand signs under it with its test and its live key; verification in test takes the brand's codes only.
    const brandTestCode = await generate(brand.testKey, anotherSquattedGtin, 'BRAND-T-1');
    expect(brandTestCode.status, JSON.stringify(brandTestCode.body)).toBe(201);
    const brandLiveCode = await generate(brand.liveKey, squattedGtin, 'BRAND-L-1');
    expect(brandLiveCode.status, JSON.stringify(brandLiveCode.body)).toBe(201);
    expect(await verdict(brand.testKey, brandTestCode.body.url)).toBe('AUTHENTIC');
    expect(await verdict(brand.liveKey, brandLiveCode.body.url)).toBe('AUTHENTIC');
    expect(await verdict(brand.testKey, squattersCode.body.url)).toBe('COUNTERFEIT');
    expect(await verdict(squatter.testKey, squattersCode.body.url)).toBe('COUNTERFEIT');

    // The key set says so too: the squatter's keys may sign for the prefix no more, the brand's may.
    const keys = (await jwks()).keys;
    const ofSquatter = keys.filter((key) => key.hallmark_account === squatter.id);
    expect(ofSquatter.length).toBeGreaterThan(0);
    for (const key of ofSquatter) expect(key.hallmark_gtin_prefixes).not.toContain(squattedPrefix);
    const ofBrand = keys.filter((key) => key.hallmark_account === brand.id);
    expect(ofBrand.length).toBeGreaterThan(0);
    for (const key of ofBrand) expect(key.hallmark_gtin_prefixes).toContain(squattedPrefix);
  });

  it('still refuses a live grant over another account’s granted claim, test or live, and revokes nothing', async () => {
    // A test grant of the operator's to another account is not a self-service claim: it does not give way.
    const testGrant = await api('POST', `/accounts/${other.id}/gtins`, {
      key: product.operatorKey,
      body: { gtin: grantedGtin, environment: 'test' },
    });
    expect(testGrant.status, JSON.stringify(testGrant.body)).toBe(201);
    // A sandbox claim beside it, overlapping the grant to come as well.
    const besideIt = await api('POST', '/gtins', { key: squatter.testKey, body: { prefix: `${grantedPrefix}99` } });
    expect(besideIt.status, JSON.stringify(besideIt.body)).toBe(201);
    const blocked = await api('POST', `/accounts/${brand.id}/gtins`, {
      key: product.operatorKey,
      body: { prefix: grantedPrefix },
    });
    expectError(blocked, 409, 'CONFLICT');
    // Only what blocks it is named, never whose it is.
    expect(blocked.body.error?.details).toEqual({
      prefix: grantedPrefix,
      conflictsWith: [{ kind: 'gtin', value: grantedGtin, environment: 'test' }],
    });
    expect(JSON.stringify(blocked.body)).not.toContain(other.id);
    // Nothing changed: both claims stand, the brand got nothing.
    expect((await api('GET', '/gtins', { key: squatter.testKey })).body.claims[0]).toMatchObject({
      id: besideIt.body.id,
      status: 'active',
    });
    expect((await api('GET', `/accounts/${other.id}/gtins`, { key: product.operatorKey })).body.claims).toEqual([testGrant.body]);
    expect(
      (await api('GET', `/accounts/${brand.id}/gtins`, { key: product.operatorKey })).body.claims.map(
        (claim: Json) => claim.value,
      ),
    ).not.toContain(grantedPrefix);

    // Another account's live grant refuses it too.
    const liveGrant = await api('POST', `/accounts/${other.id}/gtins`, {
      key: product.operatorKey,
      body: { prefix: liveGrantedPrefix },
    });
    expect(liveGrant.status, JSON.stringify(liveGrant.body)).toBe(201);
    const overLive = await api('POST', `/accounts/${brand.id}/gtins`, {
      key: product.operatorKey,
      body: { gtin: gtinUnder(liveGrantedPrefix, 7) },
    });
    expectError(overLive, 409, 'CONFLICT');
    expect(overLive.body.error?.details?.conflictsWith).toEqual([
      { kind: 'prefix', value: liveGrantedPrefix, environment: 'live' },
    ]);
  });
});
