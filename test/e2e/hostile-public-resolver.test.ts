// The public resolver against a script and other sites (found by a review of reports and scans,
// 2026-12-04). Another site's page could make its visitors' browsers file reports through the
// verification page's form, each from the visitor's own address (the per-address limit is no limit
// then); the form now takes only the page's own same-origin, top-level post. And every forged scan
// of a made-up serial kept risk-rule state for the scan history's retention (400 days), one entry a
// serial the sender chose, ten a second from one address; a forged link's counters now last the
// rules' longest window. Embedded form, real HTTP on loopback only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchFrom, newClientAddress } from '../support/client-address.ts';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let t: TestProduct;
let brand: string;
const gtin = '09506000134369';

const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(t.url, method, `/api/v1${path}`, options);
const pathOf = (url: string) => url.slice(new URL(url).origin.length);

async function generate(serialNumber: string) {
  const response = await api('POST', '/code/generate', {
    key: brand,
    body: { gtin, serialNumber, batchNumber: 'LOT1', metadata: { name: 'Perfume' } },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body as { url: string; serial: string };
}

const resolverReports = async (serial: string) =>
  (await api('GET', '/code/reports?limit=100', { key: brand })).body.reports.filter(
    (report: Json) => report.serial === serial && report.source === 'resolver',
  ) as Json[];

beforeAll(async () => {
  // A public limit high enough that only the behaviour under test decides (the default is 10/s per address).
  t = await startTestProduct({ HALLMARK_PUBLIC_RATE_LIMIT: '1000' });
  const operator = t.product.generatedOperatorKey as string;
  const created = await api('POST', '/accounts', { key: operator, body: { name: 'Brand', tier: 'enterprise' } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  brand = created.body.apiKey.secret as string;
  const granted = await api('POST', `/accounts/${created.body.account.id}/gtins`, { key: operator, body: { gtin } });
  expect(granted.status, JSON.stringify(granted.body)).toBe(201);
});

afterAll(async () => {
  await t?.stop();
});

describe('the resolver’s report form', () => {
  it('files no report that another site’s page made a visitor’s browser send (the per-address limit is not everyone’s address)', async () => {
    const code = await generate('RR-CSRF-1');
    const form = (link: string, reason: string) => new URLSearchParams({ link, reason }).toString();
    const post = (from: string, headers: Record<string, string>, reason: string) =>
      fetchFrom(from, `${t.url}/resolver/report`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: form(code.url, reason),
      });

    // The page's own form (same origin) is filed, as before.
    const own = await post(
      newClientAddress(),
      { origin: t.url, 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' },
      'bought at a market stall',
    );
    expect(own.status).toBe(200);
    expect(own.text).toContain('Thank you for your report');
    expect((await resolverReports(code.serial)).map((report) => report.reason)).toEqual(['bought at a market stall']);

    // Another site's page auto-submits the form for each visitor: top level, or in a hidden iframe.
    // Each visitor is another address, so HALLMARK_REPORT_LIMIT_PER_ADDRESS never stops it.
    const crossSite = [
      {
        origin: 'https://attacker.example',
        'sec-fetch-site': 'cross-site',
        'sec-fetch-mode': 'navigate',
        'sec-fetch-dest': 'document',
      },
      {
        origin: 'https://attacker.example',
        'sec-fetch-site': 'cross-site',
        'sec-fetch-mode': 'navigate',
        'sec-fetch-dest': 'iframe',
      },
      { origin: 'null', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'iframe' },
    ];
    for (const [index, headers] of crossSite.entries()) {
      const visitor = newClientAddress();
      const answer = await post(visitor, headers, `planted by another site ${index}`);
      const filed = answer.text.includes('Thank you for your report');
      const refused = answer.status >= 400 && answer.status < 500;
      expect({ status: answer.status, refused, filed }, JSON.stringify(headers)).toMatchObject({ refused: true, filed: false });
    }
    expect((await resolverReports(code.serial)).map((report) => report.reason)).toEqual(['bought at a market stall']);
  });

  it('files no report of a test code, whose page offers no form (a test claim is nobody’s word to shoppers)', async () => {
    const testKey = await api('POST', '/keys', { key: brand, body: { name: 'sandbox', scopes: ['*'], environment: 'test' } });
    expect(testKey.status, JSON.stringify(testKey.body)).toBe(201);
    const made = await api('POST', '/code/generate', {
      key: testKey.body.secret,
      body: { gtin, serialNumber: 'RR-TEST-1' },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const answer = await fetchFrom(newClientAddress(), `${t.url}/resolver/report`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: t.url,
        'sec-fetch-site': 'same-origin',
        'sec-fetch-dest': 'document',
      },
      body: new URLSearchParams({ link: made.body.url, reason: 'a made-up post' }).toString(),
    });
    expect(answer.text).not.toContain('Thank you for your report');
    const queue = await api('GET', '/code/reports?limit=100', { key: testKey.body.secret });
    expect(queue.status, JSON.stringify(queue.body)).toBe(200);
    expect(queue.body.reports.filter((report: Json) => report.serial === 'RR-TEST-1')).toEqual([]);
  });
});

describe('forged scans of made-up serials', () => {
  it('leave no risk-rule state kept for months per made-up serial (anyone can make up serials at the public rate limit)', async () => {
    const code = await generate('RR-REAL-1');
    const signature = /sig=([^&]+)/.exec(code.url)?.[1] as string;
    const madeUp = Array.from({ length: 20 }, (_, i) => `RR-FAKE-${String(i).padStart(4, '0')}`);
    // Unauthenticated: the public resolver page, one address.
    for (const serial of madeUp) {
      const link = code.url.replace('/21/RR-REAL-1/', `/21/${serial}/`);
      expect(link).toContain(signature);
      const page = await fetchFrom('127.0.0.1', `${t.url}${pathOf(link)}`, {
        headers: { accept: 'application/json' },
        follow: true,
      });
      expect(JSON.parse(page.text).verdict, page.text).toBe('COUNTERFEIT');
    }
    // Each of them is a 400-day entry of the risk rules' state (memory, journaled to cache_state
    // and read back whole at every start): a few hundred bytes each, per made-up serial.
    const dayMs = 86_400_000;
    const entries = async (outliving: number) =>
      Number(
        (
          await t.product.db.query<{ n: string }>(
            `SELECT count(*)::text AS n FROM cache_state WHERE kind = 'scan' AND key LIKE $1 AND expires_at_ms > $2`,
            [`forged:live:%:${gtin}:RR-FAKE-%`, outliving],
          )
        )[0]?.n,
      );
    // Each forged scan is still counted (its own counters, for the rules' windows): the journal's
    // write-behind (100 ms) lands them.
    let counted = 0;
    for (let i = 0; i < 50 && counted < madeUp.length; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      counted = await entries(t.clock.now().getTime());
    }
    expect(counted, 'forged scans counted').toBe(madeUp.length);
    const kept = await entries(t.clock.now().getTime() + 2 * dayMs);
    // What a forged scan needs kept is bounded by the GTIN, not by what an attacker makes up.
    expect(kept, 'risk-rule state entries outliving two days, one per made-up serial').toBeLessThanOrEqual(1);
  });
});
