import { type JsonWebKeySet, verifyOffline } from '@hallmark/client';
import { signCode } from '@hallmark/codes';
import { ed25519PrivateKeyObject, ed25519Thumbprint, generateEd25519KeyPair, signKeyRegistration } from '@hallmark/crypto';
import { formatDigitalLink } from '@hallmark/gs1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call, startTestProduct, type TestProduct } from '../support/embedded.ts';
import { publicKeyRegistration } from '../support/public-keys.ts';

// Registered public keys against a tenant that registers a brand's key first (public keys are
// public), over real HTTP (embedded form). A registration's proof, when it has one, must be the
// key's signature for the registering account and environment (docs/SIGNING.md, "Registering a key"); a
// registration is one account's in one environment, so a brand may hold its key in test and in
// live, register again a key it revoked, and a key registered by another account without a proof
// (the contract's form: name, publicKey, algorithm) blocks it not; a 409 names nobody.

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;
type Pair = ReturnType<typeof generateEd25519KeyPair>;

const gtin = '09506000134352';

function expectError(response: ApiResponse, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error?.code).toBe(code);
}

/** A 400 that names `proof` as the field in error. */
function expectProofRefused(response: ApiResponse) {
  expectError(response, 400, 'VALIDATION_ERROR');
  const fields = (response.body.error?.details?.fields ?? []) as Array<{ field: string }>;
  expect(
    fields.map((field) => field.field),
    JSON.stringify(response.body),
  ).toContain('proof');
}

describe('who may register a public key, and for which account and environment', () => {
  let test: TestProduct;
  let brand: { id: string; key: string; testKey: string };
  let attacker: { id: string; key: string; testKey: string };
  /** The brand's HSM: only the brand holds its private half; its public half is public. */
  const hsm = generateEd25519KeyPair();
  const kid = ed25519Thumbprint(hsm.publicKey);
  const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
    call<Json>(test.url, method, `/api/v1${path}`, options);
  const printed = (pair: Pair, serial: string) =>
    `https://brand.example/01/${gtin}/21/${serial}?sig=${signCode(ed25519PrivateKeyObject(pair), {
      kid: ed25519Thumbprint(pair.publicKey),
      gtin,
      serial,
    })}`;
  const verdictOf = async (url: string, key = brand.key) => {
    const answer = await api('POST', '/code/verify', { key, body: { url } });
    return answer.status === 200 ? answer.body.verdict : answer.body.error?.code;
  };
  const jwks = async () => (await call(test.url, 'GET', '/.well-known/jwks.json')).body as unknown as JsonWebKeySet;
  const tenant = async (name: string) => {
    const created = await api('POST', '/accounts', {
      key: test.product.generatedOperatorKey as string,
      body: { name, tier: 'enterprise' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const key = created.body.apiKey.secret as string;
    const sandbox = await api('POST', '/keys', { key, body: { name: 'sandbox', scopes: ['*'], environment: 'test' } });
    expect(sandbox.status, JSON.stringify(sandbox.body)).toBe(201);
    return { id: created.body.account.id as string, key, testKey: sandbox.body.secret as string };
  };

  beforeAll(async () => {
    test = await startTestProduct();
    brand = await tenant('Maison');
    attacker = await tenant('Squatter');
    // A live grant covers both environments: the brand's codes of this GTIN verify in test and live.
    const grant = await api('POST', `/accounts/${brand.id}/gtins`, {
      key: test.product.generatedOperatorKey as string,
      body: { gtin },
    });
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);
  }, 60_000);

  afterAll(async () => {
    await test?.stop();
  });

  it('refuses the brand’s public key to an account whose proof is not the key’s, live or test, and stores nothing', async () => {
    const { proof: _none, ...withoutProof } = publicKeyRegistration(hsm, { accountId: attacker.id }, 'my HSM');
    // A made-up proof; the attacker's own key signing a registration of the brand's key; the
    // brand's genuine proof (made for the brand's account) replayed; a test key, for test.
    const madeUp = { ...withoutProof, proof: 'A'.repeat(86) };
    const ownKeySigned = {
      ...withoutProof,
      proof: signKeyRegistration(ed25519PrivateKeyObject(generateEd25519KeyPair()), {
        accountId: attacker.id,
        environment: 'live',
        publicKey: hsm.publicKey,
      }),
    };
    const replayed = { ...withoutProof, proof: publicKeyRegistration(hsm, { accountId: brand.id }).proof };
    for (const body of [madeUp, ownKeySigned, replayed]) {
      expectProofRefused(await api('POST', '/keys', { key: attacker.key, body }));
    }
    expectProofRefused(await api('POST', '/keys', { key: attacker.testKey, body: { ...replayed, environment: 'test' } }));

    const rows = await test.product.db.query('SELECT account_id FROM verification_keys WHERE id = $1', [kid]);
    expect(rows).toEqual([]);
    expect((await jwks()).keys.filter((key) => key.kid === kid)).toEqual([]);
    // No key could have signed the brand's printed code yet: the brand has registered none.
    expect(await verdictOf(printed(hsm, 'PRINTED-1'))).toBe('KEY_NOT_FOUND');
  });

  it('registers the brand’s key with its proof; its printed code verifies AUTHENTIC, online and offline', async () => {
    const registered = await api('POST', '/keys', { key: brand.key, body: publicKeyRegistration(hsm, { accountId: brand.id }) });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    expect(registered.body).toMatchObject({ id: kid, type: 'public', environment: 'live', status: 'active' });
    expect(JSON.stringify(registered.body)).not.toContain('proof');
    const link = printed(hsm, 'PRINTED-1');
    expect(await verdictOf(link)).toBe('AUTHENTIC');
    expect(await verdictOf(link, attacker.key)).toBe('AUTHENTIC');
    expect(verifyOffline(link, await jwks())).toMatchObject({ valid: true, kid, account: brand.id });
  });

  it('reads a printed code’s AI 17 year as every GS1 reader does: 17=991231 expired in 1999, not 2099', async () => {
    // The brand's own printer signed these (the key registered above); Hallmark stored none of them.
    const dated = (serial: string, expiry: string) =>
      formatDigitalLink({
        origin: 'https://brand.example',
        gtin,
        serial,
        expiry,
        signature: signCode(ed25519PrivateKeyObject(hsm), { kid, gtin, serial, expiry }),
      });
    const expired = await api('POST', '/code/verify', { key: brand.key, body: { url: dated('DATED-1', '991231') } });
    expect(expired.status, JSON.stringify(expired.body)).toBe(200);
    expect(expired.body).toMatchObject({ verdict: 'SUSPICIOUS', riskIndicators: ['EXPIRED_CODE'] });
    // The resolver page shows the date its verdict read, not 2099.
    const { pathname, search } = new URL(dated('DATED-1', '991231'));
    const page = await fetch(`${test.url}${pathname}${search}`, { headers: { accept: 'text/html', 'accept-language': 'en-GB' } });
    const html = await page.text();
    expect(html).toContain('<dd>31 December 1999</dd>');
    // Not the year (the page's links hold the product's port, which may read 42099).
    expect(html).not.toMatch(/(?<![0-9])2099(?![0-9])/);
    const current = await api('POST', '/code/verify', { key: brand.key, body: { url: dated('DATED-2', '761231') } });
    expect(current.body).toMatchObject({ verdict: 'AUTHENTIC', riskIndicators: [] });
  });

  it('holds the same key in test and in live, each registration verifying its own environment’s codes', async () => {
    // The live registration's proof is no proof for test.
    const liveProof = publicKeyRegistration(hsm, { accountId: brand.id }).proof;
    const forTest = publicKeyRegistration(hsm, { accountId: brand.id, environment: 'test' }, 'factory HSM', {
      environmentInBody: true,
    });
    expectProofRefused(await api('POST', '/keys', { key: brand.key, body: { ...forTest, proof: liveProof } }));
    const inTest = await api('POST', '/keys', { key: brand.key, body: forTest });
    expect(inTest.status, JSON.stringify(inTest.body)).toBe(201);
    expect(inTest.body).toMatchObject({ id: kid, environment: 'test', status: 'active' });

    const live = printed(hsm, 'LIVE-1');
    const sandbox = printed(hsm, 'TEST-1');
    expect(await verdictOf(live)).toBe('AUTHENTIC');
    expect(await verdictOf(sandbox, brand.testKey)).toBe('AUTHENTIC');
    const published = (await jwks()).keys.filter((key) => key.kid === kid);
    expect(published.map((key) => [key.hallmark_account, key.hallmark_environment]).sort()).toEqual([
      [brand.id, 'live'],
      [brand.id, 'test'],
    ]);
    expect(verifyOffline(sandbox, await jwks(), { environment: 'test' })).toMatchObject({ valid: true, account: brand.id });
    const listed = async (key: string) =>
      ((await api('GET', '/keys?type=public', { key })).body.keys as Json[]).map((entry) => [entry.id, entry.environment]);
    expect(await listed(brand.key)).toEqual([[kid, 'live']]);
    expect(await listed(brand.testKey)).toEqual([[kid, 'test']]);
  });

  it('registers a revoked key again for its owner: the same id, active, its codes verify again; the other environment never stopped', async () => {
    const revoked = await api('POST', `/keys/${kid}/revoke`, { key: brand.key });
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    const live = printed(hsm, 'LIVE-2');
    expect(await verdictOf(live)).toBe('KEY_NOT_FOUND');
    expect(await verdictOf(printed(hsm, 'TEST-2'), brand.testKey)).toBe('AUTHENTIC');
    expect((await jwks()).keys.filter((key) => key.kid === kid).map((key) => key.hallmark_environment)).toEqual(['test']);
    // Scanned, a link of the key revoked in live is a live forgery, not a test code, though the same
    // key still signs test codes (before, the page said "This is a test code" and the scan went to
    // test, where its owner had no COUNTERFEIT scan and no alert).
    const { pathname, search } = new URL(live);
    const scanned = await fetch(`${test.url}${pathname}${search}`, { headers: { accept: 'application/json' } });
    const answer = (await scanned.json()) as Json;
    expect(answer, JSON.stringify(answer)).toMatchObject({ verdict: 'COUNTERFEIT' });
    expect(answer.environment).toBeUndefined();

    const again = await api('POST', '/keys', {
      key: brand.key,
      body: publicKeyRegistration(hsm, { accountId: brand.id }, 'HSM, again'),
    });
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    expect(again.body).toMatchObject({ id: kid, name: 'HSM, again', environment: 'live', status: 'active', revokedAt: null });
    expect(await verdictOf(live)).toBe('AUTHENTIC');
  });

  it('answers a second holder of the key 409 in the words of the owner’s own duplicate, naming nobody', async () => {
    const own = await api('POST', '/keys', { key: brand.key, body: publicKeyRegistration(hsm, { accountId: brand.id }) });
    expectError(own, 409, 'CONFLICT');
    // Another account that was given the private key too (two accounts holding one key is a misuse).
    const sister = await tenant('Sister company');
    const foreign = await api('POST', '/keys', { key: sister.key, body: publicKeyRegistration(hsm, { accountId: sister.id }) });
    expectError(foreign, 409, 'CONFLICT');
    const { requestId: _a, ...ownError } = own.body.error as Json;
    const { requestId: _b, ...foreignError } = foreign.body.error as Json;
    expect(foreignError).toEqual(ownError);
    expect(foreignError.details ?? {}).toEqual({});
    for (const answer of [own, foreign]) {
      expect(JSON.stringify(answer.body)).not.toContain(brand.id);
      expect(JSON.stringify(answer.body)).not.toContain(kid);
    }
    // Without the private key, a registered key and an unregistered one answer the same 400.
    const unregistered = generateEd25519KeyPair();
    const { proof: _p, ...bare } = publicKeyRegistration(hsm, { accountId: attacker.id });
    const { proof: _q, ...bareOther } = publicKeyRegistration(unregistered, { accountId: attacker.id });
    const onRegistered = await api('POST', '/keys', { key: attacker.key, body: { ...bare, proof: 'A'.repeat(86) } });
    const onUnregistered = await api('POST', '/keys', { key: attacker.key, body: { ...bareOther, proof: 'A'.repeat(86) } });
    expectProofRefused(onRegistered);
    expectProofRefused(onUnregistered);
    // The live registration stays the brand's: its codes verify.
    expect(await verdictOf(printed(hsm, 'LIVE-3'))).toBe('AUTHENTIC');
  });

  it('lets the brand register a key another account registered first without a proof, and its codes stay the brand’s', async () => {
    const hsm2 = generateEd25519KeyPair();
    const kid2 = ed25519Thumbprint(hsm2.publicKey);
    // The contract's registration (name, publicKey, algorithm) takes no proof: the attacker registers
    // the brand's public key first. It reserves nothing and vouches for none of the brand's codes.
    const { proof: _none, ...squat } = publicKeyRegistration(hsm2, { accountId: attacker.id }, 'squat');
    const squatted = await api('POST', '/keys', { key: attacker.key, body: squat });
    expect(squatted.status, JSON.stringify(squatted.body)).toBe(201);
    expect(squatted.body).toMatchObject({ id: kid2, type: 'public', status: 'active' });
    expect(await verdictOf(printed(hsm2, 'SECOND-0'))).not.toBe('AUTHENTIC');
    const registered = await api('POST', '/keys', {
      key: brand.key,
      body: publicKeyRegistration(hsm2, { accountId: brand.id }, 'second HSM'),
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    const link = printed(hsm2, 'SECOND-1');
    expect(await verdictOf(link)).toBe('AUTHENTIC');
    expect(verifyOffline(link, await jwks())).toMatchObject({ valid: true, account: brand.id });
    // The attacker revoking "its" kid revokes its own row only; the brand's codes still verify.
    expect((await api('POST', `/keys/${kid2}/revoke`, { key: attacker.key })).status).toBe(200);
    expect(await verdictOf(link)).toBe('AUTHENTIC');
    const [row] = await test.product.db.query<{ status: string }>(
      'SELECT status FROM verification_keys WHERE id = $1 AND account_id = $2',
      [kid2, brand.id],
    );
    expect(row?.status).toBe('active');
  });
});
