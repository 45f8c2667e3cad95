// The public resolver against what a reviewer did to it over HTTP, in both forms: its page (and
// JSON) must say what POST /code/verify says, no more. A test key's code is test data, never an
// authentic product; a code the brand signed outside Hallmark is found under the brand's
// registered key; an auction object's label with a variant or an expiry it was not issued with is
// not authentic; a brand's code that only looks like an object's label is the brand's code; and a
// forged signature tells nobody which serials were issued or what they are; and a reload within the
// reload window never shows a verdict that a key's revocation or the owner's block has changed.
import { signCode } from '@hallmark/codes';
import { ed25519PrivateKeyObject, ed25519Thumbprint, generateEd25519KeyPair } from '@hallmark/crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { call, startEmbeddedProduct } from '../support/embedded.ts';
import { publicKeyRegistration } from '../support/public-keys.ts';
import { waitFor } from '../support/wait.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

const gtin = '09506000134352';
const testNotice = 'This is a test code: it is not a real product.';
const forgedSignature = 'A'.repeat(86);
/** Serials of this run: each form has a database of its own, but a name says which run made it. */
const run = Date.now().toString(36).toUpperCase();

/** The page's one headline. */
const headline = (html: string) => /<h1>([^<]*)<\/h1>/.exec(html)?.[1];

/** A reload window longer than any test here: a reload shows the earlier scan unless something it read changed. */
const settings = { HALLMARK_PUBLIC_RATE_LIMIT: '1000', HALLMARK_RESOLVER_RELOAD_SECONDS: '600' };

describe.each([
  ['embedded', () => startEmbeddedProduct(settings)],
  ['distributed', () => startDistributedProduct(settings)],
])('the public resolver against a hostile reader (%s form)', (_form, start) => {
  let product: RunningProduct;
  let brand: { id: string; key: string; testKey: string };
  const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
    call<Json>(product.url, method, `/api/v1${path}`, options);
  /** The link as the resolver serves it: the printed link's path and query on this product. */
  const onResolver = (link: string) => {
    const { pathname, search } = new URL(link);
    return `${product.url}${pathname}${search}`;
  };
  /** The page a phone shows (the printed link's redirect followed). */
  const page = async (link: string) => {
    const response = await fetch(onResolver(link), { headers: { accept: 'text/html' } });
    const html = await response.text();
    expect(response.status, html).toBe(200);
    return html;
  };
  /** The resolver's JSON for the link, with its status. */
  const resolverJson = async (link: string) => {
    const response = await fetch(onResolver(link), { headers: { accept: 'application/json' } });
    return { status: response.status, body: (await response.json()) as Json };
  };
  const apiVerdict = async (url: string) => {
    const answer = await api('POST', '/code/verify', { key: brand.key, body: { url } });
    return answer.status === 200 ? answer.body.verdict : answer.body.error?.code;
  };
  const generate = async (key: string, body: Json) => {
    const created = await api('POST', '/code/generate', { key, body: { gtin, ...body } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.url as string;
  };

  beforeAll(async () => {
    product = await start();
    const created = await api('POST', '/accounts', {
      key: product.operatorKey,
      body: { name: 'Maison Resolver', tier: 'enterprise' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const key = created.body.apiKey.secret as string;
    const sandbox = await api('POST', '/keys', { key, body: { name: 'sandbox', scopes: ['*'], environment: 'test' } });
    expect(sandbox.status, JSON.stringify(sandbox.body)).toBe(201);
    brand = { id: created.body.account.id as string, key, testKey: sandbox.body.secret as string };
    // A live grant: the brand signs this GTIN's codes in live and in test.
    const grant = await api('POST', `/accounts/${brand.id}/gtins`, { key: product.operatorKey, body: { gtin } });
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);
  }, 120_000);

  afterAll(async () => {
    await product?.stop();
  });

  it('answers a printed link whose percent-encoding is not UTF-8 as the resolver does: a page to a browser, JSON when asked, CORS either way, and keeps serving', async () => {
    // Found by a resolver audit (2026-12-07): refused before routing, such a link got bare JSON without
    // the resolver's headers; the first fix read the query that is not parsed there and stopped the process.
    for (const path of [`/01/${gtin}/21/%E0%A4%A`, `/verify/01/${gtin}/21/A%ZZ?sig=AAAA`]) {
      const asPage = await fetch(`${product.url}${path}`, { headers: { accept: 'text/html' } });
      expect(asPage.status, path).toBe(400);
      expect(asPage.headers.get('content-type'), path).toBe('text/html; charset=utf-8');
      expect(asPage.headers.get('access-control-allow-origin'), path).toBe('*');
      expect(asPage.headers.get('referrer-policy'), path).toBe('same-origin');
      expect(headline(await asPage.text()), path).toBe('This code could not be read');
      const asJson = await fetch(`${product.url}${path}`, { headers: { accept: 'application/json' } });
      expect(asJson.status, path).toBe(400);
      expect(asJson.headers.get('access-control-allow-origin'), path).toBe('*');
      expect(((await asJson.json()) as Json).error?.code, path).toBe('VALIDATION_ERROR');
      expect(asJson.headers.get('access-control-allow-methods'), path).toBe('GET, HEAD, OPTIONS');
    }
    // A linkset asked by its query is not a browser's page (the query is read from the URL there).
    const linkset = await fetch(`${product.url}/01/${gtin}/21/%E0%A4%A?linkType=linkset`, { headers: { accept: '*/*' } });
    expect([linkset.status, linkset.headers.get('content-type')]).toEqual([400, 'application/json; charset=utf-8']);
    // The API's own paths keep the envelope, without the resolver's headers.
    const api400 = await fetch(`${product.url}/api/v1/codes/%E0%A4%A`);
    expect([api400.status, api400.headers.get('access-control-allow-origin')]).toEqual([400, null]);
    expect((await fetch(`${product.url}/health`)).status).toBe(200);
  });

  it('shows a test key’s code as test data, never as an authentic product: a test panel, and JSON with verdict TEST and environment test', async () => {
    const url = await generate(brand.testKey, { serialNumber: `T-1-${run}`, metadata: { name: 'Sandbox Tonic' } });

    const json = await resolverJson(url);
    expect(json.status, JSON.stringify(json.body)).toBe(200);
    expect(json.body).toMatchObject({
      verdict: 'TEST',
      environment: 'test',
      confidence: 0,
      checks: { signature: { passed: true } },
    });
    expect(JSON.stringify(json.body)).not.toMatch(/AUTHENTIC/i);

    const html = await page(url);
    expect(headline(html)).toBe(testNotice);
    expect(html).toContain('<title>This is a test code');
    expect(html).toContain('made with a test key');
    expect(html).toContain('Sandbox Tonic');
    expect(html).not.toContain('Authentic product');
    expect(html).not.toContain('verdict authentic');
    // A test claim is nobody's word to shoppers: no issuer, no brand band.
    expect(html).not.toContain('Issued by');
    expect(html).not.toContain('Maison Resolver');
  });

  it('finds a code the brand signed outside Hallmark under its registered key, as POST /code/verify does', async () => {
    const hsm = generateEd25519KeyPair();
    const registered = await api('POST', '/keys', { key: brand.key, body: publicKeyRegistration(hsm, { accountId: brand.id }) });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    const serial = `EXT-${run}`;
    const signedBy = (pair: ReturnType<typeof generateEd25519KeyPair>) =>
      `${product.url}/01/${gtin}/21/${serial}?sig=${signCode(ed25519PrivateKeyObject(pair), {
        kid: ed25519Thumbprint(pair.publicKey),
        gtin,
        serial,
      })}`;
    const genuine = signedBy(hsm);
    expect(await apiVerdict(genuine)).toBe('AUTHENTIC');

    const json = await resolverJson(genuine);
    expect(json.status, JSON.stringify(json.body)).toBe(200);
    expect(json.body).toMatchObject({ verdict: 'AUTHENTIC', serial, checks: { signature: { passed: true } } });
    const html = await page(genuine);
    expect(headline(html)).toBe('Authentic product');
    expect(html).toContain('<dt>Issued by</dt><dd>Maison Resolver</dd>');

    // The same serial signed by a key the brand never registered is still a forgery.
    const forged = signedBy(generateEd25519KeyPair());
    expect(await apiVerdict(forged)).toBe('COUNTERFEIT');
    expect((await resolverJson(forged)).body).toMatchObject({ verdict: 'COUNTERFEIT' });
    expect(headline(await page(forged))).toBe('Counterfeit: do not use');
  });

  it('does not show a reload an AUTHENTIC verdict the revocation of its key, or its owner’s block, has changed since', async () => {
    /** The resolver's verdict for `link` once it is no longer AUTHENTIC, waiting at most 5 s (the cache epochs' poll is 500 ms). */
    const verdictOnceChanged = (link: string) =>
      waitFor(
        'a reload to be verified again',
        async () => {
          const { body } = await resolverJson(link);
          return body.verdict === 'AUTHENTIC' ? undefined : (body.verdict as string);
        },
        { timeoutMs: 5_000, intervalMs: 250 },
      );

    /**
     * Until a reload shows the scan just made (the same count, AUTHENTIC), at most 5 s: a reload is
     * the same scan as long as nothing its verdict read changed, and a key registered (or a brand's
     * first signing key made) just before moves the epochs this gateway reads within a poll.
     */
    const reloadsShowTheirScan = (link: string) =>
      waitFor(
        'a reload to show the scan it made',
        async () => {
          const before = (await resolverJson(link)).body;
          const reload = (await resolverJson(link)).body;
          const same = reload.verdict === 'AUTHENTIC' && reload.metadata?.totalScans === before.metadata?.totalScans;
          return same ? true : undefined;
        },
        { timeoutMs: 5_000, intervalMs: 250 },
      );

    // A code signed outside Hallmark, under a key the brand registered, then revoked.
    const hsm = generateEd25519KeyPair();
    const registered = await api('POST', '/keys', {
      key: brand.key,
      body: publicKeyRegistration(hsm, { accountId: brand.id }, 'leaked HSM'),
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    const serial = `REVOKED-${run}`;
    const signed = `${product.url}/01/${gtin}/21/${serial}?sig=${signCode(ed25519PrivateKeyObject(hsm), {
      kid: ed25519Thumbprint(hsm.publicKey),
      gtin,
      serial,
    })}`;
    expect((await resolverJson(signed)).body).toMatchObject({ verdict: 'AUTHENTIC' });
    await reloadsShowTheirScan(signed);
    const revoked = await api('POST', `/keys/${registered.body.id}/revoke`, { key: brand.key });
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    await waitFor('the API to stop answering AUTHENTIC', async () =>
      (await apiVerdict(signed)) === 'AUTHENTIC' ? undefined : true,
    );
    expect(await verdictOnceChanged(signed)).toBe('COUNTERFEIT');
    expect(headline(await page(signed))).toBe('Counterfeit: do not use');

    // A code Hallmark issued, which its owner then blocks as counterfeit (a cloned label).
    const issued = await generate(brand.key, { serialNumber: `BLOCKED-${run}`, metadata: { name: 'Cloned Cuvée' } });
    expect((await resolverJson(issued)).body).toMatchObject({ verdict: 'AUTHENTIC' });
    await reloadsShowTheirScan(issued);
    expect(headline(await page(issued))).toBe('Authentic product');
    const block = await api('POST', '/blocklist', {
      key: brand.key,
      body: { gtin, serial: `BLOCKED-${run}`, kind: 'counterfeit', reason: 'clones seen' },
    });
    expect(block.status, JSON.stringify(block.body)).toBe(201);
    await waitFor('the API to answer COUNTERFEIT', async () => ((await apiVerdict(issued)) === 'COUNTERFEIT' ? true : undefined));
    expect(await verdictOnceChanged(issued)).toBe('COUNTERFEIT');
    expect(headline(await page(issued))).toBe('Counterfeit: do not use');
  });

  it('does not read an auction object’s label as authentic with a variant or an expiry it was not issued with', async () => {
    const registered = await api('POST', '/auction/objects/register', {
      key: brand.key,
      body: { title: 'Submariner 1680', category: 'watch', ownerId: `collector-${run}` },
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    const label = registered.body.qr_data.gs1DigitalLink as string;
    expect((await resolverJson(label)).body).toMatchObject({
      status: 'authentic',
      cryptographic_identity: { signature_valid: true },
    });

    const withVariant = label.replace('/21/', '/22/FAKE/21/');
    const withExpiry = `${label}&17=991231`;
    for (const tampered of [withVariant, withExpiry]) {
      expect(tampered).not.toBe(label);
      expect(await apiVerdict(tampered), tampered).toBe('COUNTERFEIT');
      const json = await resolverJson(tampered);
      expect(json.status, JSON.stringify(json.body)).toBe(200);
      expect(json.body.status, tampered).not.toBe('authentic');
      expect(json.body.cryptographic_identity?.signature_valid, tampered).not.toBe(true);
      expect(json.body.verdict, tampered).toBe('COUNTERFEIT');
      const html = await page(tampered);
      expect(headline(html), tampered).toBe('Counterfeit: do not use');
      expect(html).not.toContain('Authentic product');
    }
  });

  it('verifies a brand’s code whose serial starts with HM- and whose batch names a category as the brand’s code', async () => {
    const url = await generate(brand.key, {
      serialNumber: `HM-LOT7-${run}`,
      batchNumber: 'bottle',
      metadata: { name: 'Eau de Vie' },
    });
    expect(await apiVerdict(url)).toBe('AUTHENTIC');
    const json = await resolverJson(url);
    expect(json.status, JSON.stringify(json.body)).toBe(200);
    expect(json.body).toMatchObject({ verdict: 'AUTHENTIC', serial: `HM-LOT7-${run}`, batch: 'bottle' });
    const html = await page(url);
    expect(headline(html)).toBe('Authentic product');
    expect(html).toContain('Eau de Vie');
    expect(html).not.toContain('No object with this serial');
  });

  it('answers a forged signature alike for a serial issued in live, one issued in test and one never issued: no product, nothing to tell them apart', async () => {
    const secret = 'Secret Elixir No. 5';
    const live = `SN-LIVE-${run}`;
    const sandbox = `SN-TEST-${run}`;
    const never = `SN-NONE-${run}`;
    await generate(brand.key, { serialNumber: live, batchNumber: 'LOT1', metadata: { name: secret } });
    await generate(brand.testKey, { serialNumber: sandbox, batchNumber: 'LOT1', metadata: { name: secret } });
    const forgedLink = (serial: string) => `${product.url}/01/${gtin}/21/${serial}/10/LOT1?sig=${forgedSignature}`;
    // Only the serial (and the moment of verification) may differ between the answers.
    const normalised = (text: string, serial: string) =>
      text.replaceAll(serial, '<serial>').replace(/<dt>Verified<\/dt><dd>[^<]*<\/dd>/, '<dt>Verified</dt><dd></dd>');

    const pages = await Promise.all(
      [live, sandbox, never].map(async (serial) => normalised(await page(forgedLink(serial)), serial)),
    );
    for (const html of pages) {
      expect(headline(html)).toBe('Counterfeit: do not use');
      expect(html).not.toContain(secret);
      expect(html).not.toContain('never issued');
      expect(html).not.toContain(testNotice);
    }
    expect(pages[1]).toBe(pages[0]);
    expect(pages[2]).toBe(pages[0]);

    const answers = await Promise.all(
      [live, sandbox, never].map(async (serial) => {
        const json = await resolverJson(forgedLink(serial));
        return { status: json.status, body: normalised(JSON.stringify(json.body), serial) };
      }),
    );
    expect(answers[0]?.status).toBe(200);
    expect(JSON.parse(answers[0]?.body ?? '{}')).toMatchObject({
      verdict: 'COUNTERFEIT',
      checks: { signature: { passed: false } },
    });
    expect(answers[0]?.body).not.toContain(secret);
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
  });
});
