// Issue #18, item 1: every reader of a link (POST /code/verify by url and by QR content, the
// resolver's page and JSON, its public report form, POST /code/report, GET /code/qr) refuses a GS1 Digital Link that the
// GS1 Barcode Syntax Engine refuses, with 400 INVALID_URL and a reason that names what is wrong;
// a code Hallmark generated still verifies. One embedded product for the file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';

let t: TestProduct;
let brand: string;
let code: string;
const gtin = '09506000134352';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
const api = <T = Record<string, any>>(method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<T>(t.url, method, `/api/v1${path}`, options);

beforeAll(async () => {
  t = await startTestProduct({ HALLMARK_PUBLIC_RATE_LIMIT: '1000' });
  const operator = t.product.generatedOperatorKey as string;
  const created = await api('POST', '/accounts', { key: operator, body: { name: 'Syntax brand', tier: 'enterprise' } });
  brand = created.body.apiKey.secret;
  await api('POST', `/accounts/${created.body.account.id}/gtins`, { key: operator, body: { gtin } });
  const generated = await api('POST', '/code/generate', {
    key: brand,
    body: { gtin, serialNumber: 'SYN-1', batchNumber: 'LOT7', expiryDate: '2031-06-30' },
  });
  expect(generated.status, JSON.stringify(generated.body)).toBe(201);
  code = generated.body.url as string;
});

afterAll(async () => {
  await t?.stop();
});

/** The generated code's path and signature, rewritten into forms GS1's syntax refuses, each with the reason expected. */
function rejected(): [string, string, RegExp][] {
  const { pathname, searchParams } = new URL(code);
  const sig = searchParams.get('sig') as string;
  return [
    ['an AI in the query that belongs in the path', `/01/${gtin}/21/SYN-1?10=LOT7&sig=${sig}`, /AI 10 .*belongs in the path/],
    ['an AI given twice', `${pathname}?17=310630&17=310630&sig=${sig}`, /AI 17 .*given twice/],
    ['a numeric query key that is not an AI', `${pathname}?999=x&sig=${sig}`, /query key 999 is numeric but not a GS1 AI/],
    ['an AI that is no key qualifier in the path', `/01/${gtin}/17/310630/21/SYN-1?sig=${sig}`, /not a valid key and qualifiers/],
    ['an empty path element', `/01//${gtin}/21/SYN-1?sig=${sig}`, /no GS1 primary key/],
    ['an impossible date', `${pathname}?17=311340&sig=${sig}`, /AI 17 .*month 13/],
    ['a batch over 20 characters', `/01/${gtin}/21/SYN-1/10/${'L'.repeat(21)}?sig=${sig}`, /AI 10 .*too long/],
  ];
}

describe('links that GS1 syntax refuses', () => {
  it('POST /code/verify answers 400 INVALID_URL with the reason, by url and by QR content', async () => {
    for (const [what, path, reason] of rejected()) {
      for (const body of [{ url: `https://id.example.com${path}` }, { content: ` https://id.example.com${path}\n` }]) {
        const response = await api('POST', '/code/verify', { key: brand, body });
        expect(response.status, what).toBe(400);
        expect(response.body.error?.code, what).toBe('INVALID_URL');
        expect(response.body.error?.message, what).toMatch(reason);
      }
    }
  });

  it('the resolver answers 400: the JSON envelope with the reason, and a page that says it', async () => {
    for (const [what, path, reason] of rejected()) {
      const json = await fetch(`${t.url}${path}`, { headers: { accept: 'application/json' } });
      expect(json.status, what).toBe(400);
      const body = (await json.json()) as { error: { code: string; message: string } };
      expect(body.error.code, what).toBe('INVALID_URL');
      expect(body.error.message, what).toMatch(reason);
      const page = await fetch(`${t.url}${path}`);
      expect(page.status, what).toBe(400);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await page.text(), what).toMatch(new RegExp(reason.source.replace(/\\\//g, '/')));
    }
  });

  it("the resolver's public report form answers 400 with a page that says what is wrong", async () => {
    for (const [what, path, reason] of rejected()) {
      const response = await fetch(`${t.url}/resolver/report`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ link: `${t.url}${path}`, reason: 'looks fake' }).toString(),
      });
      expect(response.status, what).toBe(400);
      expect(await response.text(), what).toMatch(new RegExp(reason.source.replace(/\\\//g, '/')));
    }
  });

  it('POST /code/report and GET /code/qr answer 400 INVALID_URL with the reason', async () => {
    for (const [what, path, reason] of rejected()) {
      const url = `https://id.example.com${path}`;
      const report = await api('POST', '/code/report', { key: brand, body: { url, reason: 'looks fake' } });
      expect(report.status, what).toBe(400);
      expect(report.body.error, what).toMatchObject({ code: 'INVALID_URL', message: expect.stringMatching(reason) });
      const qr = await fetch(`${t.url}/api/v1/code/qr?url=${encodeURIComponent(url)}`, { headers: { 'x-api-key': brand } });
      expect(qr.status, what).toBe(400);
      const body = (await qr.json()) as { error: { code: string; message: string } };
      expect(body.error.code, what).toBe('INVALID_URL');
      expect(body.error.message, what).toMatch(reason);
    }
  });

  it('a generated code still verifies, as printed and in GS1 order, at the API and the resolver', async () => {
    const verified = await api('POST', '/code/verify', { key: brand, body: { url: code } });
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);
    expect(verified.body.verdict).toBe('AUTHENTIC');
    const { pathname, search } = new URL(code);
    const gs1Order = pathname.replace(/\/21\/([^/]+)\/10\/([^/]+)/, '/10/$2/21/$1');
    expect(gs1Order).not.toBe(pathname);
    const resolved = await fetch(`${t.url}${gs1Order}${search}`, { headers: { accept: 'application/json' } });
    expect(resolved.status).toBe(200);
    expect(((await resolved.json()) as { verdict: string }).verdict).toBe('AUTHENTIC');
  });
});
