// The scans and analytics reads and the code listing under attack (from a review of 2026-12-05), over real
// HTTP on loopback, embedded form. Odd query values (NUL, repeated parameters, unicode, limits,
// years 1 and 9999, crafted cursors) must answer 400 naming the field or 200 with the caller's own
// data, never a 500; narrow keys read nothing that assets:read guards; the list, the aggregates,
// the top codes, the country map and a code's detail agree for one known set of scans made by the
// owner, a rival account (forged and genuine links, a made-up country) and test keys of both.
import { gs1CheckDigit } from '@hallmark/gs1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';
import { waitFor } from '../support/wait.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let product: TestProduct;
let lastGtin = 0;
/** A GTIN of this file's own (0950778…), with its check digit. */
function newGtin(): string {
  lastGtin += 1;
  const digits = `0950778${String(lastGtin).padStart(6, '0')}`;
  return `${digits}${gs1CheckDigit(digits)}`;
}

const api = (method: string, path: string, options: { key?: string; body?: unknown; headers?: Record<string, string> } = {}) =>
  call<Json>(product.url, method, `/api/v1${path}`, options);

async function raw(path: string, key: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${product.url}/api/v1${path}`, { headers: { 'x-api-key': key, ...headers } });
  const text = await response.text();
  const json = (response.headers.get('content-type') ?? '').includes('json');
  return { status: response.status, text, body: (json && text ? JSON.parse(text) : {}) as Json };
}

function ok(response: { status: number; body: Json }, status = 200): Json {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  return response.body;
}

async function tenant(name: string, gtin?: string): Promise<{ key: string; id: string; test: string }> {
  const operator = product.product.generatedOperatorKey as string;
  const created = ok(await api('POST', '/accounts', { key: operator, body: { name, tier: 'enterprise' } }), 201);
  if (gtin) ok(await api('POST', `/accounts/${created.account.id}/gtins`, { key: operator, body: { gtin } }), 201);
  const key = created.apiKey.secret as string;
  const test = ok(await api('POST', '/keys', { key, body: { name: 'sandbox', scopes: ['*'], environment: 'test' } }), 201)
    .secret as string;
  return { key, id: created.account.id as string, test };
}

const generate = async (key: string, gtin: string, serialNumber: string, batchNumber = 'LOT-R') =>
  ok(await api('POST', '/code/generate', { key, body: { gtin, serialNumber, batchNumber } }), 201) as {
    url: string;
    assetId: string;
  };

const verify = async (key: string, url: string, location?: Json) =>
  api('POST', '/code/verify', { key, body: { url, ...(location ? { location } : {}) } });

const forge = (url: string) => url.replace(/sig=(.)/, (_, c: string) => `sig=${c === 'A' ? 'B' : 'A'}`);
const cursorOf = (parts: string[]) => Buffer.from(JSON.stringify(parts)).toString('base64url');

beforeAll(async () => {
  product = await startTestProduct();
});

afterAll(async () => {
  await product?.stop();
});

describe('odd query values on the scans reads and the code listing', () => {
  let brand: { key: string; id: string; test: string };
  let gtin: string;

  beforeAll(async () => {
    gtin = newGtin();
    brand = await tenant('Brand with odd queries', gtin);
    const code = await generate(brand.key, gtin, 'ODD-1');
    ok(await verify(brand.key, code.url, { latitude: 48.85, longitude: 2.35, country: 'FR' }));
    await waitFor('the scan stored', async () =>
      ((await api('GET', '/scans', { key: brand.key })).body.scans?.length ?? 0) >= 1 ? true : undefined,
    );
  });

  it('answers 400 naming the field for NUL, repeated parameters and limits out of range, in JSON and CSV, lists and detail', async () => {
    const refused: [string, string][] = [
      ['/scans?serial=%00', 'serial'],
      ['/scans?batch=a%00b', 'batch'],
      ['/scans?serial=%00&format=csv', 'serial'],
      ['/codes?serial=%00', 'serial'],
      ['/codes?batch=%00', 'batch'],
      ['/scans?verdict=AUTHENTIC&verdict=COUNTERFEIT', 'verdict'],
      ['/scans?gtin=1&gtin=2', 'gtin'],
      ['/codes?gtin=1&gtin=2', 'gtin'],
      ['/scans?limit=1&limit=2', 'limit'],
      ['/scans?limit=0', 'limit'],
      ['/scans?limit=-1', 'limit'],
      ['/scans?limit=1.5', 'limit'],
      ['/scans?limit=', 'limit'],
      ['/codes?limit=0', 'limit'],
      ['/codes?limit=201', 'limit'],
      ['/codes?limit=1e309', 'limit'],
      ['/code/reports?limit=0', 'limit'],
      ['/scans/top-codes?limit=0', 'limit'],
      ['/scans?country=fr', 'country'],
      ['/scans?country=%C3%85X', 'country'],
      ['/scans?reported=1', 'reported'],
      ['/scans?scannedBy=OWNER', 'scannedBy'],
      ['/scans?format=CSV', 'format'],
      ['/codes/%00', 'assetId'],
    ];
    for (const [path, field] of refused) {
      const answer = await raw(path, brand.key);
      expect(answer.status, `${path}: ${answer.text}`).toBe(400);
      expect(answer.body.error?.code, path).toBe('VALIDATION_ERROR');
      expect(
        ((answer.body.error?.details?.fields ?? []) as Json[]).map((f) => f.field),
        path,
      ).toContain(field);
    }
    // Unicode the database can hold finds nothing, and says so.
    for (const path of ['/scans?serial=%F0%9F%98%80', '/scans?serial=%ED%A0%80', '/scans?batch=%E2%80%AE']) {
      expect(ok(await raw(path, brand.key)).scans, path).toEqual([]);
    }
    expect(ok(await raw('/codes?serial=%F0%9F%98%80', brand.key)).data).toEqual([]);
    for (const id of ['..%2F..%2Fscans', '%F0%9F%98%80', encodeURIComponent('code_%00')]) {
      expect((await raw(`/codes/${id}`, brand.key)).status, id).toBe(404);
    }
  });

  it('takes the first and last years PostgreSQL holds on every scans route, and refuses what rounding or a default pushes outside', async () => {
    // The list: year 1 to 9999 hold the scan just made.
    for (const path of [
      '/scans?from=0001-01-01T00:00:00Z',
      '/scans?to=9999-12-31T00:00:00Z',
      '/scans?from=2026-01-01t00:00:00z',
    ]) {
      expect(ok(await raw(path, brand.key)).scans.length, path).toBe(1);
    }
    const csv = await raw('/scans?from=0001-01-01T00:00:00Z&to=9999-12-31T00:00:00Z&format=csv', brand.key);
    expect(csv.status).toBe(200);
    expect(csv.text.trim().split('\r\n')).toHaveLength(2);
    for (const path of [
      '/scans/aggregates?groupBy=verdict&from=0001-01-01T00:00:00Z&to=0001-01-02T00:00:00Z',
      '/scans/aggregates?groupBy=verdict&bucket=hour&from=0001-01-01T00:00:00Z&to=0001-01-01T05:00:00Z',
      '/scans/aggregates?groupBy=verdict&to=9999-12-31T00:00:00Z',
      '/scans/aggregates?groupBy=flag&bucket=hour&to=9999-12-30T23:30:00Z',
      '/scans/top-codes?from=0001-01-01&to=0001-01-02',
      '/scans/top-codes?from=9999-12-30&to=9999-12-31',
      '/scans/countries?from=0001-01-01&to=0001-01-01T01:00:00Z',
      '/scans/countries?to=9999-12-31T00:00:00Z',
    ]) {
      const answer = ok(await raw(path, brand.key));
      expect(answer.buckets ?? answer.codes ?? answer.countries, path).toEqual([]);
    }
    for (const path of [
      '/scans?from=0000-12-31T23:59:59Z',
      '/scans?from=2026-01-02&to=2026-01-01',
      '/scans?from=2026-01-01&to=2026-01-01',
      '/scans?from=2026-02-30',
      '/scans?from=%2B002026-01-01T00:00:00Z',
      '/scans?to=9999-12-31T00:00:01Z&format=csv',
      '/scans/aggregates?groupBy=verdict&bucket=hour&to=0001-01-01T05:00:00Z',
      '/scans/aggregates?groupBy=verdict&from=9999-12-01T00:00:00Z',
      '/scans/aggregates?groupBy=verdict&bucket=hour&from=2026-01-01T00:00:00Z&to=2026-02-02T00:00:00Z',
      '/scans/top-codes?to=0001-01-01T00:00:01Z',
      '/scans/top-codes?from=2024-01-01&to=2026-01-01',
      '/scans/countries?from=0001-01-01',
    ]) {
      const answer = await raw(path, brand.key);
      expect(answer.status, `${path}: ${answer.text}`).toBe(400);
      expect(answer.body.error?.code, path).toBe('VALIDATION_ERROR');
    }
  });

  it('takes crafted cursors at the ends of time as positions among the caller’s own rows, and refuses another route’s', async () => {
    const uuid = '00000000-0000-0000-0000-000000000000';
    const cursorAt = (at: string) => cursorOf([at, uuid]);
    // Earlier than every scan: nothing; later than every scan (year 10000 in UTC): the caller's one.
    expect(ok(await raw(`/scans?cursor=${cursorAt('0001-01-01 00:00:00+15')}`, brand.key)).scans).toEqual([]);
    const late = ok(await raw(`/scans?cursor=${cursorAt('9999-12-31 23:59:59-15')}`, brand.key)).scans as Json[];
    expect(late.map((scan) => scan.gtin)).toEqual([gtin]);
    expect(ok(await raw(`/codes?cursor=${cursorOf(['0001-01-01 00:00:00+15', 'code_x'])}`, brand.key)).data).toEqual([]);
    const codes = ok(await raw(`/codes?cursor=${cursorOf(['9999-12-31 23:59:59-15', 'code_x'])}`, brand.key)).data as Json[];
    expect(codes.map((code) => code.gtin)).toEqual([gtin]);
    expect(ok(await raw(`/code/reports?cursor=${cursorOf(['99999999999999999', 'rep_0'])}`, brand.key)).reports).toEqual([]);
    // A cursor of one list is not one of another's: 400 naming cursor, never a 500.
    for (const path of [
      `/scans?cursor=${cursorOf(['2026-01-01 00:00:00+00', 'code_x'])}`,
      `/codes?cursor=${cursorOf(['2026-01-01 00:00:00+00', uuid])}`,
      `/code/reports?cursor=${cursorOf(['2026-01-01 00:00:00+00', uuid])}`,
      `/scans?cursor=${cursorOf(['2026-01-01T00:00:00.1234567Z', uuid])}`,
      `/scans?cursor=${cursorOf(['2026-13-01 00:00:00+00', uuid])}`,
      `/codes?cursor=${cursorOf(['2026-01-01 24:00:00+00', 'code_x'])}`,
      `/code/reports?cursor=${cursorOf(['123456789012345678', 'rep_0'])}`,
    ]) {
      const answer = await raw(path, brand.key);
      expect(answer.status, `${path}: ${answer.text}`).toBe(400);
      expect(
        ((answer.body.error?.details?.fields ?? []) as Json[]).map((f) => f.field),
        path,
      ).toEqual(['cursor']);
    }
  });
});

describe('narrow keys and the scans reads', () => {
  it('a key without assets:read reads no scans, counts, codes or reports, in JSON, CSV or HEAD', async () => {
    const gtin = newGtin();
    const brand = await tenant('Brand with narrow keys', gtin);
    const code = await generate(brand.key, gtin, 'NARROW-1');
    ok(await verify(brand.key, code.url, { latitude: 48.85, longitude: 2.35, country: 'FR' }));
    const paths = [
      '/scans',
      '/scans?format=csv',
      '/scans/aggregates?groupBy=country',
      '/scans/top-codes',
      '/scans/countries',
      '/codes',
      `/codes/${code.assetId}`,
      '/code/reports',
      '/blocklist',
    ];
    for (const scopes of [['assets:verify'], ['assets:create'], ['keys:read', 'keys:write']]) {
      const created = await api('POST', '/keys', { key: brand.key, body: { name: scopes.join(' '), scopes } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const narrow = created.body.secret as string;
      for (const path of paths) {
        const answer = await raw(path, narrow);
        expect(answer.status, `${scopes.join(' ')} ${path}: ${answer.text}`).toBe(403);
        expect(answer.text, path).not.toContain('NARROW-1');
        expect(answer.text, path).not.toContain('FR');
        const head = await fetch(`${product.url}/api/v1${path}`, { method: 'HEAD', headers: { 'x-api-key': narrow } });
        expect(head.status, `HEAD ${path}`).toBe(403);
      }
      const csv = await raw('/scans', narrow, { accept: 'text/csv' });
      expect(csv.status).toBe(403);
      expect(csv.text).not.toContain('NARROW-1');
    }
  });
});

describe('one known set of scans, read every way', () => {
  it('the list, CSV, aggregates, top codes, country map and the code’s detail agree; the rival and the test keys count where the docs say', async () => {
    const gtin = newGtin();
    const rivalGtin = newGtin();
    const brand = await tenant('Brand with a known set', gtin);
    const rival = await tenant('Rival with its own codes', rivalGtin);
    const genuine = await generate(brand.key, gtin, 'SET-1', 'LOT-SET');
    const other = await generate(brand.key, gtin, 'SET-2', 'LOT-SET');
    const rivalCode = await generate(rival.key, rivalGtin, 'RIVAL-1');

    // Owner: 2 AUTHENTIC of SET-1 in FR, 1 AUTHENTIC of SET-2 in DE.
    for (let i = 0; i < 2; i++) {
      expect(ok(await verify(brand.key, genuine.url, { latitude: 48.85, longitude: 2.35, country: 'FR' })).verdict).toBe(
        'AUTHENTIC',
      );
    }
    expect(ok(await verify(brand.key, other.url, { latitude: 52.52, longitude: 13.4, country: 'DE' })).verdict).toBe('AUTHENTIC');
    // Rival's live key: 3 forged copies of SET-1 "in KP", 1 genuine scan of SET-2 "in KP", its own code scanned by the brand.
    for (let i = 0; i < 3; i++) {
      expect(ok(await verify(rival.key, forge(genuine.url), { latitude: 39.03, longitude: 125.75, country: 'KP' })).verdict).toBe(
        'COUNTERFEIT',
      );
    }
    expect(ok(await verify(rival.key, other.url, { latitude: 39.03, longitude: 125.75, country: 'KP' })).verdict).toBe(
      'AUTHENTIC',
    );
    expect(ok(await verify(brand.key, rivalCode.url, { latitude: 48.85, longitude: 2.35, country: 'FR' })).verdict).toBe(
      'AUTHENTIC',
    );
    // Test keys, the brand's and the rival's: whatever they answer, nothing of it is live.
    for (const key of [brand.test, rival.test]) {
      for (const url of [genuine.url, forge(genuine.url), other.url]) {
        const answer = await verify(key, url, { latitude: 55.75, longitude: 37.62, country: 'RU' });
        expect([200, 404], JSON.stringify(answer.body)).toContain(answer.status);
      }
    }

    const expected = 7; // 3 owner + 3 forged + 1 rival genuine
    const listed = await waitFor('the brand’s seven scans', async () => {
      const page = ok(await api('GET', '/scans?limit=100', { key: brand.key }));
      return page.scans.length >= expected ? (page.scans as Json[]) : undefined;
    });
    await new Promise((resolve) => setTimeout(resolve, 500)); // nothing more arrives
    const scans = ok(await api('GET', '/scans?limit=100', { key: brand.key })).scans as Json[];
    expect(scans.length, JSON.stringify(listed)).toBe(expected);
    expect(scans.every((scan) => scan.gtin === gtin)).toBe(true);
    expect(scans.filter((scan) => scan.country === 'RU')).toEqual([]);

    // Paged one by one, the same seven, newest first, each once.
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Json = ok(
        await api('GET', `/scans?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { key: brand.key }),
      );
      paged.push(...(page.scans as Json[]).map((scan) => scan.scanId as string));
      cursor = page.pagination.nextCursor;
    } while (cursor);
    expect(paged).toEqual(scans.map((scan) => scan.scanId));
    // The brand's cursor in the rival's hands gives the rival only its own scan of its own code.
    const brandCursor = ok(await api('GET', '/scans?limit=1', { key: brand.key })).pagination.nextCursor as string;
    // (Its scan of its own code, made by the brand after the brand's newest one, lies after that cursor.)
    const rivalSees = ok(await api('GET', `/scans?cursor=${encodeURIComponent(brandCursor)}`, { key: rival.key }))
      .scans as Json[];
    expect(rivalSees.filter((scan) => scan.gtin !== rivalGtin)).toEqual([]);
    for (const key of [brand.test, rival.test]) {
      expect(ok(await api('GET', `/scans?cursor=${encodeURIComponent(brandCursor)}`, { key })).scans).toEqual([]);
    }

    // CSV: the same rows.
    const csv = await raw('/scans?format=csv', brand.key);
    const rows = csv.text.trim().split('\r\n').slice(1);
    expect(rows.map((row) => row.split(',')[0])).toEqual(scans.map((scan) => scan.scanId));
    // With a JSON page's cursor: the scans after it (the cursor was ignored, and the whole export came again).
    const after = await raw(`/scans?format=csv&cursor=${encodeURIComponent(brandCursor)}`, brand.key);
    expect(after.status).toBe(200);
    expect(
      after.text
        .trim()
        .split('\r\n')
        .slice(1)
        .map((row) => row.split(',')[0]),
    ).toEqual(scans.slice(1).map((scan) => scan.scanId));
    expect((await raw('/scans?format=csv&cursor=not-a-cursor', brand.key)).status).toBe(400);

    // Aggregates by verdict: what the list counts.
    const byVerdict: Record<string, number> = {};
    for (const scan of scans) byVerdict[scan.verdict] = (byVerdict[scan.verdict] ?? 0) + 1;
    const sum = (buckets: Json[]) => {
      const totals: Record<string, number> = {};
      for (const bucket of buckets)
        for (const [name, count] of Object.entries(bucket.counts as Record<string, number>))
          totals[name] = (totals[name] ?? 0) + count;
      return totals;
    };
    expect(sum(ok(await api('GET', '/scans/aggregates?groupBy=verdict&bucket=day', { key: brand.key })).buckets)).toEqual(
      byVerdict,
    );
    expect(sum(ok(await api('GET', '/scans/aggregates?groupBy=verdict&bucket=hour', { key: brand.key })).buckets)).toEqual(
      byVerdict,
    );
    // The list filtered by verdict matches the count too.
    for (const [verdict, count] of Object.entries(byVerdict)) {
      expect(ok(await api('GET', `/scans?verdict=${verdict}&limit=100`, { key: brand.key })).scans.length, verdict).toBe(count);
    }
    // The country map: the owner's own countries only (FR 2, DE 1); the list keeps the rival's KP.
    const countries = ok(await api('GET', '/scans/countries', { key: brand.key })).countries;
    expect(countries).toEqual([
      { country: 'FR', scans: 2 },
      { country: 'DE', scans: 1 },
    ]);
    expect(sum(ok(await api('GET', '/scans/aggregates?groupBy=country&bucket=day', { key: brand.key })).buckets)).toEqual({
      FR: 2,
      DE: 1,
    });
    const owned = ok(await api('GET', '/scans?country=FR&scannedBy=owner&limit=100', { key: brand.key })).scans as Json[];
    expect(owned).toHaveLength(2);
    expect(ok(await api('GET', '/scans?country=KP&limit=100', { key: brand.key })).scans.length).toBe(4);
    // Top codes: SET-1 with its three forged scans, nothing of the rival's own code.
    expect(ok(await api('GET', '/scans/top-codes', { key: brand.key })).codes).toEqual([
      expect.objectContaining({ gtin, serial: 'SET-1', suspicious: 0, counterfeit: 3 }),
    ]);
    // A code's detail counts what the list holds of it.
    const detail = ok(await api('GET', `/codes/${genuine.assetId}`, { key: brand.key }));
    expect(detail.scans.count).toBe(scans.filter((scan) => scan.serial === 'SET-1').length);
    expect(ok(await api('GET', `/codes/${other.assetId}`, { key: brand.key })).scans.count).toBe(2);
    // The rival and the test keys see nothing of the brand's codes or counts.
    for (const key of [rival.key, rival.test, brand.test]) {
      expect((await api('GET', `/codes/${genuine.assetId}`, { key })).status).toBe(404);
      const listing = ok(await api('GET', `/codes?gtin=${gtin}`, { key })).data as Json[];
      expect(listing).toEqual([]);
      expect(ok(await api('GET', `/scans?gtin=${gtin}`, { key })).scans).toEqual([]);
      expect(ok(await api('GET', '/scans/top-codes', { key })).codes.filter((c: Json) => c.gtin === gtin)).toEqual([]);
    }
    // The rival's own map leaves out the brand's FR scan of the rival's code: another account's country is its word alone.
    expect(ok(await api('GET', '/scans/countries', { key: rival.key })).countries).toEqual([]);
  });
});
