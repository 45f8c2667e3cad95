import { readFile } from 'node:fs/promises';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';

/**
 * The GS1-Conformant Resolver standard 1.2 over real HTTP, one test per criterion (the wording of
 * GS1's resolver test suite, ref.gs1.org/test-suites/resolver), then the /links API the resolver
 * serves (docs/RESOLVER.md). One embedded product for the file.
 */

let t: TestProduct;
let brand: string;
let brandAccountId: string;
let other: string;
let scannedPath: string;
let itemPath: string;
/** Where printed links point (HALLMARK_RESOLVER_URL), as generated codes carry it. */
let resolverOrigin: string;

const gtin = '09506000134352';
const otherGtin = '09506000134376';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;
const api = <T = Json>(method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<T>(t.url, method, `/api/v1${path}`, options);
const manual = (path: string, init: RequestInit = {}) => fetch(`${t.url}${path}`, { redirect: 'manual', ...init });
const errorOf = (response: { body: unknown }) => (response.body as Json).error as Json;
const linksetLink = (response: Response) => /<([^>]+)>;\s*rel="linkset"/.exec(response.headers.get('link') ?? '')?.[1];

const fixture = async (name: string) =>
  JSON.parse(await readFile(new URL(`../fixtures/gs1/${name}`, import.meta.url), 'utf8')) as object;
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);

let serial = 0;
async function generate(extra: Json = {}): Promise<string> {
  serial += 1;
  const created = await api('POST', '/code/generate', {
    key: brand,
    body: { gtin, serialNumber: `CONF-${serial}`, batchNumber: 'LOT1', metadata: { name: 'Conformance Wine' }, ...extra },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const url = new URL(created.body.url as string);
  resolverOrigin = url.origin;
  return url.pathname + url.search;
}

async function createLink(body: Json, key = brand) {
  return api('POST', '/links', { key, body: { gtin, title: 'A link', type: 'text/html', ...body } });
}

beforeAll(async () => {
  t = await startTestProduct({ HALLMARK_PUBLIC_RATE_LIMIT: '1000' });
  const operator = t.product.generatedOperatorKey as string;
  const a = await api('POST', '/accounts', { key: operator, body: { name: 'Conformant brand', tier: 'enterprise' } });
  brand = a.body.apiKey.secret;
  brandAccountId = a.body.account.id;
  await api('POST', `/accounts/${brandAccountId}/gtins`, { key: operator, body: { gtin } });
  const b = await api('POST', '/accounts', { key: operator, body: { name: 'Another tenant', tier: 'enterprise' } });
  other = b.body.apiKey.secret;
  await api('POST', `/accounts/${b.body.account.id}/gtins`, { key: operator, body: { gtin: otherGtin } });
  scannedPath = await generate();
  itemPath = scannedPath.split('?')[0] as string;
});

afterAll(async () => {
  await t?.stop();
});

describe('GS1-Conformant Resolver 1.2, criterion by criterion', () => {
  it('SHALL support GET, HEAD and OPTIONS', async () => {
    const get = await manual(scannedPath);
    expect(get.status).toBe(307);
    const head = await manual(scannedPath, { method: 'HEAD' });
    expect(head.status).toBe(307);
    expect(head.headers.get('location')).toBe(get.headers.get('location'));
    expect(await head.text()).toBe('');
    const options = await manual(itemPath, {
      method: 'OPTIONS',
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'GET' },
    });
    expect(options.status).toBe(204);
    expect(options.headers.get('access-control-allow-methods')).toBe('GET, HEAD, OPTIONS');
  });

  it('SHALL support CORS, on every answer including errors', async () => {
    const answers = await Promise.all([
      manual(scannedPath),
      manual(`${itemPath}?linkType=linkset`),
      manual(`${itemPath}/foo`, { headers: { accept: 'application/json' } }),
      manual(`${itemPath}/foo`),
      manual(`${itemPath}?linkType=gs1:smpc`, { headers: { accept: 'application/json' } }),
      manual('/.well-known/gs1resolver'),
      manual(`/verify${scannedPath}`),
      manual('/AAAAAAAAAA'),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([307, 200, 400, 400, 404, 200, 200, 400]);
    for (const answer of answers) {
      expect(answer.headers.get('access-control-allow-origin')).toBe('*');
      // GS1's suite reads the methods on the GET's answer itself.
      expect(answer.headers.get('access-control-allow-methods')).toBe('GET, HEAD, OPTIONS');
      expect(answer.headers.get('access-control-expose-headers')).toBe('Link, Location');
    }
  });

  it('SHALL extract and validate the URI and report errors with 400, never 200', async () => {
    const json = await manual(`${itemPath}/foo`, { headers: { accept: 'application/json' } });
    expect(json.status).toBe(400);
    expect(((await json.json()) as Json).error.code).toBe('INVALID_URL');
    const page = await manual('/01/09506000134353');
    expect(page.status).toBe(400);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const badQuery = await manual(`${itemPath}?17=991399`, { headers: { accept: 'application/json' } });
    expect(badQuery.status).toBe(400);
  });

  it('SHALL provide a resolver description file at /.well-known/gs1resolver, valid against GS1’s schema', async () => {
    const response = await manual('/.well-known/gs1resolver');
    const description = (await response.json()) as Json;
    const validate = ajv.compile(await fixture('resolver-description-file-schema.json'));
    expect(validate(description), JSON.stringify(validate.errors)).toBe(true);
    expect(description.resolverRoot).toBe(t.url);
    expect(description.supportedPrimaryKeys).toEqual(['01']);
    // The schema would take a name where an AI belongs only if it were an AI: it is not.
    expect(validate({ ...description, supportedPrimaryKeys: ['gtin'] })).toBe(false);
  });

  it('linkType=linkset (and the older all, and Accept: application/linkset+json) answers the linkset, valid against GS1’s schema', async () => {
    const validate = ajv.compile(await fixture('gs1-linkset-schema.json'));
    for (const request of [
      manual(`${itemPath}?linkType=linkset`),
      manual(`${itemPath}?linkType=all`),
      manual(itemPath, { headers: { accept: 'application/linkset+json' } }),
    ]) {
      const response = await request;
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/linkset\+json/);
      expect(response.headers.get('link')).toContain('rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"');
      const linkset = (await response.json()) as Json;
      expect(validate(linkset), JSON.stringify(validate.errors)).toBe(true);
      expect(linkset.linkset[0].anchor).toBe(`${t.url}/01/${gtin}/10/LOT1/21/CONF-1`);
    }
    // The schema is not a formality: a linkset without its item description fails it.
    expect(validate({ linkset: [{ anchor: `${t.url}/01/${gtin}` }] })).toBe(false);
  });

  it('exactly one default link per item, with a title and no other attribute; every other link has href, title and type', async () => {
    const linkset = (await (await manual(`${itemPath}?linkType=linkset`)).json()) as Json;
    const entry = linkset.linkset[0];
    expect(entry['https://gs1.org/voc/defaultLink']).toHaveLength(1);
    expect(Object.keys(entry['https://gs1.org/voc/defaultLink'][0]).sort()).toEqual(['href', 'title']);
    for (const [relation, links] of Object.entries(entry)) {
      if (relation === 'anchor' || relation === 'itemDescription' || relation.endsWith('/defaultLink')) continue;
      for (const link of links as Json[])
        expect(link).toEqual(
          expect.objectContaining({ href: expect.any(String), title: expect.any(String), type: expect.any(String) }),
        );
    }
  });

  it('redirects (307) to the default link unless the query says otherwise: the verification page, with the query passed on', async () => {
    const response = await manual(scannedPath);
    const linkset = (await (await manual(`${itemPath}?linkType=linkset`)).json()) as Json;
    const defaultHref = linkset.linkset[0]['https://gs1.org/voc/defaultLink'][0].href as string;
    expect(defaultHref).toBe(`${t.url}/verify${itemPath}`);
    expect(response.headers.get('location')).toBe(`${defaultHref}?${scannedPath.split('?')[1]}`);
    // Without a query, the target is exactly the linkset's default href (GS1's test compares them).
    expect((await manual(itemPath)).headers.get('location')).toBe(defaultHref);
  });

  it('linkType=gs1:verificationService redirects to the verification page (CURIE or URI)', async () => {
    for (const linkType of ['gs1:verificationService', 'https://gs1.org/voc/verificationService']) {
      const response = await manual(`${scannedPath}&linkType=${encodeURIComponent(linkType)}`);
      expect(response.status).toBe(307);
      expect(response.headers.get('location')).toBe(`${t.url}/verify${scannedPath}`);
    }
  });

  it('a link type the item does not have is 404, with the types it has', async () => {
    const json = await manual(`${itemPath}?linkType=gs1:smpc`, { headers: { accept: 'application/json' } });
    expect(json.status).toBe(404);
    expect(linksetLink(json)).toBe(`${t.url}${itemPath}?linkType=linkset`);
    const body = (await json.json()) as Json;
    expect(body.error).toMatchObject({ code: 'NOT_FOUND', details: { linkType: 'gs1:smpc' } });
    expect(body.error.details.available).toContain('gs1:verificationService');
    const page = await manual(`${itemPath}?linkType=gs1:nonsense`);
    expect(page.status).toBe(404);
    expect(await page.text()).toContain('gs1:verificationService');
  });

  it('exposes the linkset in a Link header on every answer, redirects too, and that link works', async () => {
    const answers = [
      await manual(scannedPath),
      await manual(`${scannedPath}&linkType=gs1:verificationService`),
      await manual(`${itemPath}?linkType=linkset`),
      await manual(`/verify${scannedPath}`),
    ];
    for (const answer of answers) {
      const linkset = linksetLink(answer);
      expect(linkset).toBe(`${t.url}${itemPath}?linkType=linkset`);
      const followed = await fetch(linkset as string);
      expect(followed.status).toBe(200);
      expect(((await followed.json()) as Json).linkset).toHaveLength(1);
    }
    // Only the linkset: not every link of the linkset (deprecated since resolver 1.0).
    expect(answers[0]?.headers.get('link')).not.toContain('rel="gs1:');
  });

  it('tolerates a trailing slash: the same answer with or without it', async () => {
    const without = await manual(itemPath);
    const withSlash = await manual(`${itemPath}/`);
    expect(withSlash.status).toBe(without.status);
    expect(withSlash.headers.get('location')).toBe(without.headers.get('location'));
  });

  it('decompresses a compressed Digital Link, with the uncompressed URI in Link rel="owl:sameAs"', async () => {
    // GS1's compression test vector: ARHKVAdpQg is /01/09780345418913.
    const response = await manual('/ARHKVAdpQg?foo=bar');
    expect(response.status).toBe(307);
    expect(response.headers.get('link')).toContain(`<${t.url}/01/09780345418913?foo=bar>; rel="owl:sameAs"`);
    expect(response.headers.get('location')).toBe(`${t.url}/verify/01/09780345418913?foo=bar`);
    expect(linksetLink(response)).toBe(`${t.url}/01/09780345418913?linkType=linkset`);
    const linkset = await manual('/ARHKVAdpQg?linkType=linkset');
    expect(((await linkset.json()) as Json).linkset[0].anchor).toBe(`${t.url}/01/09780345418913`);
    expect((await manual('/favicon.ico')).status).toBe(404);
    expect((await manual('/AAAAAAAAAA', { headers: { accept: 'application/json' } })).status).toBe(400);
  });

  it('GS1 vocabulary link types redirect to the brand’s links, the query passed on', async () => {
    const types = ['gs1:pip', 'gs1:registerProduct', 'gs1:recallStatus', 'gs1:productPassport'];
    for (const linkType of types) {
      const created = await createLink({ linkType, href: `https://brand.example/${linkType.slice(4)}?from=qr` });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
    }
    for (const linkType of types) {
      const response = await manual(`${itemPath}?linkType=${linkType}&foo=bar`);
      expect(response.status).toBe(307);
      expect(response.headers.get('location')).toBe(`https://brand.example/${linkType.slice(4)}?from=qr&foo=bar`);
      expect(linksetLink(response)).toBeDefined();
    }
    const uriForm = await manual(`${itemPath}?linkType=${encodeURIComponent('https://gs1.org/voc/pip')}`);
    expect(uriForm.headers.get('location')).toBe('https://brand.example/pip?from=qr');
    const linkset = (await (await manual(`${itemPath}?linkType=linkset`)).json()) as Json;
    expect(ajv.compile(await fixture('gs1-linkset-schema.json'))(linkset)).toBe(true);
    expect(linkset.linkset[0]['https://gs1.org/voc/recallStatus'][0]).toEqual({
      href: 'https://brand.example/recallStatus?from=qr',
      title: 'A link',
      type: 'text/html',
    });
  });
});

describe('a scan is counted once', () => {
  it('the redirect and the page it leads to count one scan; HEAD counts nothing', async () => {
    const path = await generate();
    const followed = await fetch(`${t.url}${path}`);
    expect(followed.status).toBe(200);
    expect(followed.url).toBe(`${t.url}/verify${path}`);
    expect(await followed.text()).toContain('Conformance Wine');
    for (const target of [path, `/verify${path}`]) {
      const head = await manual(target, { method: 'HEAD' });
      expect(head.status).toBeLessThan(400);
    }
    // Past the reload window, so this view is a scan of its own: the second.
    t.clock.advance(11_000);
    const json = (await (await fetch(`${t.url}${path}`, { headers: { accept: 'application/json' } })).json()) as Json;
    expect(json.metadata.totalScans).toBe(2);
  });
});

describe('the /links API', () => {
  it('creates, lists, updates and deletes links, each change an event in the account’s stream', async () => {
    expect(brand).toMatch(/^svc_live_/);
    const created = await createLink({ linkType: 'gs1:instructions', href: 'https://brand.example/manual', hreflang: ['en'] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ gtin, lot: null, serial: null, linkType: 'gs1:instructions', default: false });
    const id = created.body.id as string;
    const listed = await api('GET', `/links?gtin=${gtin}&limit=2`, { key: brand });
    expect(listed.status).toBe(200);
    expect(listed.body.links).toHaveLength(2);
    expect(listed.body.links[0].id).toBe(id);
    expect(listed.body.pagination.hasMore).toBe(true);
    const next = await api('GET', `/links?gtin=${gtin}&limit=2&cursor=${encodeURIComponent(listed.body.pagination.nextCursor)}`, {
      key: brand,
    });
    expect(next.body.links.map((link: Json) => link.id)).not.toContain(id);

    const updated = await api('PATCH', `/links/${id}`, { key: brand, body: { title: 'User manual', hreflang: ['en', 'de'] } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ title: 'User manual', hreflang: ['en', 'de'], href: 'https://brand.example/manual' });
    expect((await manual(`${itemPath}?linkType=gs1:instructions`)).headers.get('location')).toBe('https://brand.example/manual');

    const deleted = await api('DELETE', `/links/${id}`, { key: brand });
    expect(deleted.status).toBe(204);
    expect((await manual(`${itemPath}?linkType=gs1:instructions`)).status).toBe(404);
    expect((await api('DELETE', `/links/${id}`, { key: brand })).status).toBe(404);

    const events = await t.product.db.query<{ event_type: string; data: Json }>(
      `SELECT event_type, data FROM event_log WHERE stream_id = $1 AND data->>'id' = $2 ORDER BY stream_version`,
      [`account-${brandAccountId}-live`, id],
    );
    expect(events.map((event) => event.event_type)).toEqual(['link.created', 'link.updated', 'link.deleted']);
  });

  it('of several links of a type, redirects to the one in the reader’s language', async () => {
    await createLink({ linkType: 'gs1:tutorial', href: 'https://brand.example/tutorial/en', hreflang: ['en'] });
    await createLink({ linkType: 'gs1:tutorial', href: 'https://brand.example/tutorial/de', hreflang: ['de'] });
    const location = async (acceptLanguage?: string) =>
      (
        await manual(
          `${itemPath}?linkType=gs1:tutorial`,
          acceptLanguage ? { headers: { 'accept-language': acceptLanguage } } : {},
        )
      ).headers.get('location');
    expect(await location('de-CH,de;q=0.9,en;q=0.5')).toBe('https://brand.example/tutorial/de');
    expect(await location('fr, en;q=0.8, de;q=0.7')).toBe('https://brand.example/tutorial/en');
    expect(await location('fr')).toBe('https://brand.example/tutorial/en');
    expect(await location()).toBe('https://brand.example/tutorial/en');
  });

  it('uses the most specific link of a type: serial over lot over GTIN', async () => {
    await createLink({ linkType: 'gs1:certificationInfo', href: 'https://brand.example/cert/gtin' });
    await createLink({ linkType: 'gs1:certificationInfo', lot: 'LOT1', href: 'https://brand.example/cert/lot' });
    await createLink({ linkType: 'gs1:certificationInfo', serial: 'CONF-1', href: 'https://brand.example/cert/serial' });
    const location = async (path: string) => (await manual(`${path}?linkType=gs1:certificationInfo`)).headers.get('location');
    expect(await location(`/01/${gtin}/10/LOT1/21/CONF-1`)).toBe('https://brand.example/cert/serial');
    expect(await location(`/01/${gtin}/10/LOT1/21/CONF-99`)).toBe('https://brand.example/cert/lot');
    expect(await location(`/01/${gtin}/10/LOT2/21/CONF-99`)).toBe('https://brand.example/cert/gtin');
    expect(await location(`/01/${gtin}`)).toBe('https://brand.example/cert/gtin');
  });

  it('a brand’s default link replaces the page as the default; the page stays gs1:verificationService', async () => {
    const created = await createLink({
      linkType: 'gs1:homepage',
      serial: 'CONF-1',
      href: 'https://brand.example/home',
      default: true,
    });
    expect(created.status).toBe(201);
    const response = await manual(scannedPath);
    expect(response.headers.get('location')).toBe(`https://brand.example/home?${scannedPath.split('?')[1]}`);
    const linkset = (await (await manual(`${itemPath}?linkType=linkset`)).json()) as Json;
    expect(linkset.linkset[0]['https://gs1.org/voc/defaultLink']).toEqual([
      { href: 'https://brand.example/home', title: 'A link' },
    ]);
    expect(linkset.linkset[0]['https://gs1.org/voc/verificationService'][0].href).toBe(`${t.url}/verify${itemPath}`);
    // Another serial of the GTIN keeps the page as its default.
    expect((await manual(`/01/${gtin}/10/LOT1/21/CONF-99`)).headers.get('location')).toBe(
      `${t.url}/verify/01/${gtin}/10/LOT1/21/CONF-99`,
    );
    await api('DELETE', `/links/${created.body.id}`, { key: brand });
  });

  it('refuses another tenant’s GTIN, non-http(s) URLs, unknown link types and a second default', async () => {
    const foreign = await createLink({ linkType: 'gs1:pip', href: 'https://evil.example/' }, other);
    expect(foreign.status).toBe(403);
    expect(errorOf(foreign).code).toBe('GTIN_NOT_OWNED');
    for (const href of [
      'javascript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      'ftp://brand.example/x',
      '/relative',
      'https://user:pw@brand.example/',
      `${resolverOrigin}/01/${gtin}`,
      `${resolverOrigin}/ARHKVAdpQg`,
      // The resolver by another scheme or port is the resolver.
      `${resolverOrigin.replace(/^https?:/, (scheme) => (scheme === 'http:' ? 'https:' : 'http:'))}/01/${gtin}`,
      `${new URL(resolverOrigin).protocol}//${new URL(resolverOrigin).hostname}:8443/01/${gtin}`,
    ]) {
      const refused = await createLink({ linkType: 'gs1:pip', href });
      expect(refused.status, href).toBe(400);
      expect(errorOf(refused).code).toBe('VALIDATION_ERROR');
    }
    for (const linkType of ['gs1:nonsense', 'pip', 'https://schema.org/url', 'gs1:defaultLink', 'gs1:verificationService']) {
      const refused = await createLink({ linkType, href: 'https://brand.example/' });
      expect(refused.status, linkType).toBe(400);
      expect(errorOf(refused).details.fields[0].field).toBe('linkType');
    }
    const badGtin = await createLink({ gtin: '09506000134353', linkType: 'gs1:pip', href: 'https://brand.example/' });
    expect(errorOf(badGtin).code).toBe('INVALID_GTIN');

    const first = await createLink({ linkType: 'gs1:faqs', lot: 'LOT9', href: 'https://brand.example/faq', default: true });
    expect(first.status).toBe(201);
    const second = await createLink({ linkType: 'gs1:support', lot: 'LOT9', href: 'https://brand.example/help', default: true });
    expect(second.status).toBe(409);
    expect(errorOf(second).code).toBe('CONFLICT');
    const plain = await createLink({ linkType: 'gs1:support', lot: 'LOT9', href: 'https://brand.example/help' });
    const promoted = await api('PATCH', `/links/${plain.body.id}`, { key: brand, body: { default: true } });
    expect(promoted.status).toBe(409);

    // Another tenant cannot see, change or delete the brand's links.
    expect((await api('PATCH', `/links/${first.body.id}`, { key: other, body: { title: 'x' } })).status).toBe(404);
    expect((await api('DELETE', `/links/${first.body.id}`, { key: other })).status).toBe(404);
    expect((await api('GET', `/links?gtin=${gtin}`, { key: other })).body.links).toEqual([]);
  });

  it('checks scopes: assets:read lists, assets:create is needed to change', async () => {
    const key = await api('POST', '/keys', { key: brand, body: { name: 'reader', scopes: ['assets:read'] } });
    expect(key.status).toBe(201);
    const reader = key.body.secret as string;
    expect((await api('GET', '/links', { key: reader })).status).toBe(200);
    const refused = await createLink({ linkType: 'gs1:pip', href: 'https://brand.example/' }, reader);
    expect(refused.status).toBe(403);
    expect(errorOf(refused).code).toBe('INSUFFICIENT_SCOPE');
    expect((await api('GET', '/links')).status).toBe(401);
  });

  it('is in the OpenAPI document', async () => {
    const document = (await call(t.url, 'GET', '/api/v1/openapi.json')).body as Json;
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(['/api/v1/links', '/api/v1/links/{id}', '/verify/01/{linkPath}', '/{compressed}']),
    );
  });
});
