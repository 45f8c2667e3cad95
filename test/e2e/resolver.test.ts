import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';

let t: TestProduct;
let brand: string;

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
const api = <T = Record<string, any>>(method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<T>(t.url, method, `/api/v1${path}`, options);

let serialCounter = 0;
async function generate(extra: Record<string, unknown> = {}): Promise<string> {
  serialCounter += 1;
  const created = await api('POST', '/code/generate', {
    key: brand,
    body: {
      gtin: '09506000134352',
      serialNumber: `RES-${serialCounter}`,
      batchNumber: 'LOT7',
      metadata: { name: 'Chateau Example 2019' },
      ...extra,
    },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.url as string;
}

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;
const readJson = async (response: Response | Promise<Response>) => (await (await response).json()) as Json;
const pathOf = (url: string) => url.slice(new URL(url).origin.length);

beforeAll(async () => {
  t = await startTestProduct({ HALLMARK_PUBLIC_RATE_LIMIT: '1000' });
  const operator = t.product.generatedOperatorKey as string;
  const created = await api('POST', '/accounts', { key: operator, body: { name: 'Resolver brand', tier: 'enterprise' } });
  brand = created.body.apiKey.secret;
  // The brand owns the GTIN it signs for (docs/SIGNING.md).
  await api('POST', `/accounts/${created.body.account.id}/gtins`, { key: operator, body: { gtin: '09506000134352' } });
});

afterAll(async () => {
  await t?.stop();
});

describe('the resolver over HTTP', () => {
  it('renders the page for a scanned code, without a key or cookies, with a strict CSP, under 30 KB', async () => {
    const url = await generate();
    const response = await fetch(`${t.url}${pathOf(url)}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('set-cookie')).toBeNull();
    expect(response.headers.get('content-security-policy')).toMatch(/^default-src 'none'; style-src 'self' 'sha256-[^']+'; /);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    const page = await response.text();
    expect(Buffer.byteLength(page)).toBeLessThan(30_000);
    expect(page).not.toMatch(/<script|https?:\/\/(?!localhost)/i);
    expect(page).toContain('Authentic product');
    expect(page).toContain('Chateau Example 2019');
    expect(page).toContain('RES-1');
    expect(page).toContain('LOT7');
    expect(page).toMatch(/UTC/);
  });

  it('accepts either qualifier order and the expiry, and counts a reload within seconds once', async () => {
    const url = await generate({ expiryDate: '2031-06-30' });
    const link = new URL(url);
    const reordered = link.pathname.replace(/\/21\/([^/]+)\/10\/([^/]+)/, '/10/$2/21/$1') + link.search;
    expect(reordered).not.toBe(link.pathname + link.search);
    const json = { accept: 'application/json' };
    const first = await readJson(fetch(`${t.url}${reordered}`, { headers: json }));
    expect(first).toMatchObject({ verdict: 'AUTHENTIC', serial: link.pathname.split('/')[4], metadata: { totalScans: 1 } });
    const reload = await readJson(fetch(`${t.url}${pathOf(url)}`, { headers: json }));
    expect(reload.metadata.totalScans).toBe(1);
    const page = await (await fetch(`${t.url}${pathOf(url)}`, { headers: { 'accept-language': 'de-DE' } })).text();
    expect(page).toContain('30. Juni 2031');
    t.clock.advance(11_000);
    const later = await readJson(fetch(`${t.url}${pathOf(url)}`, { headers: json }));
    expect(later.metadata.totalScans).toBe(2);
  });

  it('reads Accept-Language tags Intl refuses as absent, never a 500', async () => {
    const url = await generate({ expiryDate: '2031-06-30' });
    for (const language of ['en-GB-oed', `${'aa-'.repeat(60)}aa`, `en-GB-${'abcdefgh-'.repeat(25)}x1`, 'en-GB-oed, de-DE']) {
      const page = await fetch(`${t.url}${pathOf(url)}`, { headers: { 'accept-language': language } });
      const html = await page.text();
      expect(page.status, `${language}: ${html.slice(0, 200)}`).toBe(200);
      // The first usable tag is taken (de-DE after the refused one), else British English.
      expect(html).toContain(language.endsWith('de-DE') ? '30. Juni 2031' : '30 June 2031');
      const json = await fetch(`${t.url}${pathOf(url)}`, {
        headers: { 'accept-language': language, accept: 'application/json' },
      });
      expect(json.status, language).toBe(200);
    }
  });

  it('counts loads of one client sent together once, all showing that scan', async () => {
    const url = await generate();
    const json = { accept: 'application/json' };
    const loads = await Promise.all(
      Array.from({ length: 6 }, () => readJson(fetch(`${t.url}${pathOf(url)}`, { headers: json }))),
    );
    // Before: each load counted its own scan (1, 2, … 6).
    expect(loads.map((load) => load.metadata.totalScans)).toEqual([1, 1, 1, 1, 1, 1]);
    const verified = await api('POST', '/code/verify', { key: brand, body: { url } });
    expect(verified.body.metadata.totalScans).toBe(2);
  });

  it('answers JSON, an RFC 9264 linkset, HEAD and CORS preflight', async () => {
    const url = await generate();
    const path = pathOf(url);
    const linkset = await fetch(`${t.url}${path}&linkType=linkset`);
    expect(linkset.headers.get('content-type')).toMatch(/^application\/linkset\+json/);
    const body = await readJson(linkset);
    expect(body.linkset[0].anchor).toBe(
      `${t.url}/01/09506000134352/10/LOT7/21/${encodeURIComponent(new URL(url).pathname.split('/')[4] as string)}`,
    );
    expect(Object.keys(body.linkset[0]['https://gs1.org/voc/defaultLink'][0]).sort()).toEqual(['href', 'title']);
    expect(body.linkset[0]['https://gs1.org/voc/defaultLink'][0].href).not.toContain('linkType');
    const byAccept = await fetch(`${t.url}${path}`, { headers: { accept: 'application/linkset+json' } });
    expect((await readJson(byAccept)).linkset).toHaveLength(1);

    const head = await fetch(`${t.url}${path}`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('text/html; charset=utf-8');
    // HEAD answers the status GET would, before anything is verified: an embedded load's 403, a link
    // without its signature's 400 (both were 200).
    const embeddedHead = await fetch(`${t.url}/verify${path}`, {
      method: 'HEAD',
      headers: { 'sec-fetch-dest': 'image', 'sec-fetch-mode': 'no-cors', 'sec-fetch-site': 'cross-site' },
    });
    expect(embeddedHead.status).toBe(403);
    expect((await fetch(`${t.url}/verify${path.split('?')[0]}`, { method: 'HEAD' })).status).toBe(400);
    expect((await fetch(`${t.url}/verify${path}`, { method: 'HEAD' })).status).toBe(200);
    const preflight = await fetch(`${t.url}${path}`, {
      method: 'OPTIONS',
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'GET' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-methods')).toBe('GET, HEAD, OPTIONS');
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');

    const description = await call(t.url, 'GET', '/.well-known/gs1resolver');
    expect(description.body).toMatchObject({
      resolverRoot: t.url,
      supportedPrimaryKeys: ['01'],
    });
  });

  it('answers malformed links with 400 and a readable page, never 200', async () => {
    for (const path of [
      '/01/123/21/x?sig=abc',
      '/01/09506000134353/21/SN?sig=abc',
      '/01/09506000134352/10/L1?sig=abc',
      '/01/09506000134352/21/SN-1',
    ]) {
      const response = await fetch(`${t.url}${path}`);
      expect(response.status, path).toBe(400);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const page = await response.text();
      expect(page).toContain('This code could not be read');
      const asJson = await fetch(`${t.url}${path}`, { headers: { accept: 'application/json' } });
      expect(asJson.status).toBe(400);
      expect((await readJson(asJson)).error.code).toMatch(/^(INVALID_URL|INVALID_GTIN|MISSING_SIGNATURE)$/);
    }
  });

  it('shows a forged signature as counterfeit, and an unknown code too, without telling them apart', async () => {
    const url = await generate();
    const forged = url.replace(/sig=(.)/, (_, c: string) => `sig=${c === 'A' ? 'B' : 'A'}`);
    const page = await (await fetch(`${t.url}${pathOf(forged)}`)).text();
    expect(page).toContain('Counterfeit: do not use');
    expect(page).toContain('Report this product');
    // Whether the serial was ever issued, and what it is, is nobody's business without its signature.
    expect(page).not.toContain('Chateau Example 2019');
    const unknown = url.replace(/\/21\/[^/]+\//, '/21/NEVER-ISSUED/');
    const unknownPage = await (await fetch(`${t.url}${pathOf(unknown)}`)).text();
    expect(unknownPage).toContain('Counterfeit: do not use');
    expect(unknownPage).not.toContain('never issued');
  });

  it('takes a report from the page’s form without flagging the code by itself', async () => {
    const url = await generate();
    const form = new URLSearchParams({ link: url, reason: 'Label print is blurry' });
    const response = await fetch(`${t.url}/resolver/report`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('Thank you for your report');
    const reports = await t.product.db.query<{ reason: string; reported_by_key: string }>(
      'SELECT reason, reported_by_key FROM code_reports WHERE serial = $1',
      [new URL(url).pathname.split('/')[4]],
    );
    expect(reports).toEqual([{ reason: 'Label print is blurry', reported_by_key: 'public-resolver' }]);
    const after = await readJson(fetch(`${t.url}${pathOf(url)}`, { headers: { accept: 'application/json' } }));
    expect(after.verdict).toBe('AUTHENTIC');
    const bad = await fetch(`${t.url}/resolver/report`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'link=nonsense',
    });
    expect(bad.status).toBe(400);
  });
});
