import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';

// A brand's links are read on every scan of its items, by anyone. A brand that stores thousands of
// links on a GTIN, and a stranger who makes up a new serial for each request, must not make a scan
// slow or the process's memory grow: a level of an item (its GTIN, a lot, a serial) holds at most
// 100 links, and the resolver keeps a GTIN's links per GTIN, never per made-up serial. Over real
// HTTP, embedded form (the product shares this process, so its heap is measured here).

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

const gtin = '09506000134352';
let t: TestProduct;
let brand: string;

const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(t.url, method, `/api/v1${path}`, options);
const longHref = (index: number) => `https://brand.example/${index}/${'a'.repeat(2_000)}`;
const createLink = (body: Json) =>
  api('POST', '/links', {
    key: brand,
    body: {
      gtin,
      linkType: 'gs1:pip',
      title: 'T'.repeat(200),
      type: 'text/html',
      hreflang: ['en', 'de', 'fr', 'it', 'es', 'nl', 'pt', 'pl', 'sv', 'da'],
      ...body,
    },
  });

beforeAll(async () => {
  t = await startTestProduct({ HALLMARK_PUBLIC_RATE_LIMIT: '100000', HALLMARK_RESOLVER_URL: 'https://id.brand.example' });
  const operator = t.product.generatedOperatorKey as string;
  const created = await api('POST', '/accounts', { key: operator, body: { name: 'Many links', tier: 'enterprise' } });
  brand = created.body.apiKey.secret;
  await api('POST', `/accounts/${created.body.account.id}/gtins`, { key: operator, body: { gtin } });
});

afterAll(async () => {
  await t?.stop();
});

describe('links on the hostile path', () => {
  it('refuses an href back into the resolver’s item links however its host name is spelled, so no scan goes round in circles', async () => {
    // A trailing dot names the same host in DNS; `%2E` is one once a URL parser reads it. Both were
    // stored, and every scan of the GTIN was sent to itself again (a review of 2026-12-05).
    for (const href of [
      `https://id.brand.example/01/${gtin}`,
      `http://ID.Brand.Example:8443/01/${gtin}`,
      `https://id.brand.example./01/${gtin}`,
      `https://id.brand.example%2E/01/${gtin}`,
    ]) {
      const refused = await createLink({ href, default: true, title: 'Loop', hreflang: ['en'] });
      const fields = (refused.body.error?.details as { fields?: Array<{ field: string }> } | undefined)?.fields;
      expect([href, refused.status, fields?.[0]?.field]).toEqual([href, 400, 'href']);
    }
    // Another host's /01/ path is a link like any other.
    const elsewhere = await createLink({ href: `https://shop.brand.example/01/${gtin}`, title: 'Shop', hreflang: ['en'] });
    expect(elsewhere.status, JSON.stringify(elsewhere.body)).toBe(201);
    expect((await api('DELETE', `/links/${elsewhere.body.id}`, { key: brand })).status).toBe(204);
  });

  it('holds at most 100 links per level of an item, however many are created at once', async () => {
    for (let index = 0; index < 96; index += 1) {
      const created = await createLink({ href: longHref(index) });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
    }
    // Eight at once for the last four places: four are stored.
    const racing = await Promise.all(Array.from({ length: 8 }, (_, index) => createLink({ href: longHref(100 + index) })));
    expect(racing.map((answer) => answer.status).sort()).toEqual([201, 201, 201, 201, 409, 409, 409, 409]);
    const refused = racing.find((answer) => answer.status === 409) as { body: Json };
    expect(refused.body.error).toMatchObject({ code: 'CONFLICT', details: { limit: 100, gtin, lot: null, serial: null } });
    const stored = await t.product.db.query<{ links: number }>(
      `SELECT count(*)::int AS links FROM item_links WHERE gtin = $1 AND lot IS NULL AND serial IS NULL`,
      [gtin],
    );
    expect(stored[0]?.links).toBe(100);
    // A lot and a serial are levels of their own; the serial's link comes first for its type.
    expect((await createLink({ lot: 'L1', href: 'https://brand.example/lot' })).status).toBe(201);
    expect((await createLink({ serial: 'S1', href: 'https://brand.example/serial' })).status).toBe(201);
    const redirect = async (path: string) =>
      (await fetch(`${t.url}${path}?linkType=gs1:pip`, { redirect: 'manual' })).headers.get('location');
    expect(await redirect(`/01/${gtin}/21/S1`)).toBe('https://brand.example/serial');
    expect(await redirect(`/01/${gtin}/21/S2/10/L1`)).toBe('https://brand.example/lot');
    expect(await redirect(`/01/${gtin}/21/S2`)).toBe(longHref(0));
  });

  it('keeps nothing per made-up serial: 400 scans of new serials leave the heap where it was', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const scan = async (serial: string) => {
      const response = await fetch(`${t.url}/01/${gtin}/21/${serial}`, { redirect: 'manual' });
      await response.arrayBuffer();
      return response.status;
    };
    expect(await scan('WARM-1')).toBe(307);
    gc();
    const before = process.memoryUsage().heapUsed;
    const started = performance.now();
    for (let round = 0; round < 40; round += 1) {
      const statuses = await Promise.all(Array.from({ length: 10 }, (_, index) => scan(`X${round}-${index}`)));
      expect(new Set(statuses)).toEqual(new Set([307]));
    }
    const perScanMs = (performance.now() - started) / 400;
    gc();
    const grownMb = (process.memoryUsage().heapUsed - before) / 1e6;
    // Before: each serial kept a copy of the GTIN's 100 links (~300 KB): 120 MB after these 400.
    expect(grownMb).toBeLessThan(30);
    expect(perScanMs).toBeLessThan(50);
  });
});
