// Issue #21, items 1 and 2: the scans API (list, filters, CSV, aggregates) and the blocklist, over
// real HTTP, in both forms. Scans are made by verifying codes, as a client would; the volume test
// of paging and CSV stores scans directly in the database (the projection's table).
import { createPostgresDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDistributedProduct } from '../support/distributed-product.ts';
import { call, startEmbeddedProduct } from '../support/embedded.ts';
import { waitFor } from '../support/wait.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

interface Form {
  url: string;
  operatorKey: string;
  query<Row>(text: string, params?: unknown[]): Promise<Row[]>;
  /** Embedded only (the services' database is this process's): counts the statements they send that hold `needle`. */
  countStatements?(needle: string): { count(): number; stop(): void };
  stop(): Promise<void>;
}

/** A small cap of active blocks (default 10,000), so that a test reaches it. */
const maxActiveBlocks = 5;
const settings = { HALLMARK_MAX_ACTIVE_BLOCKS: String(maxActiveBlocks) };

async function embedded(): Promise<Form> {
  const { test } = await startEmbeddedProduct(settings);
  return {
    url: test.url,
    operatorKey: test.product.generatedOperatorKey as string,
    query: (text, params) => test.product.db.query(text, params),
    countStatements(needle) {
      const db = test.product.db;
      const original = db.query;
      let count = 0;
      db.query = ((text: string, params?: unknown[]) => {
        if (text.includes(needle)) count += 1;
        return original.call(db, text, params);
      }) as typeof db.query;
      return { count: () => count, stop: () => void (db.query = original) };
    },
    stop: () => test.stop(),
  };
}

async function distributed(): Promise<Form> {
  const product = await startDistributedProduct(settings);
  const db = createPostgresDatabase({ connectionString: product.databaseUrl, maxConnections: 2 });
  return {
    url: product.url,
    operatorKey: product.operatorKey,
    query: (text, params) => db.query(text, params),
    async stop() {
      await db.close();
      await product.stop();
    },
  };
}

let form: Form;
const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(form.url, method, `/api/v1${path}`, options);

function ok(response: { status: number; body: Json }, status = 200) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  return response.body;
}
function refused(response: { status: number; body: Json }, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error?.code).toBe(code);
  expect(response.body.meta?.requestId).toEqual(expect.any(String));
}

async function account(name: string, gtin: string) {
  const created = ok(await api('POST', '/accounts', { key: form.operatorKey, body: { name, tier: 'enterprise' } }), 201);
  ok(await api('POST', `/accounts/${created.account.id}/gtins`, { key: form.operatorKey, body: { gtin } }), 201);
  return { key: created.apiKey.secret as string, accountId: created.account.id as string, gtin };
}

async function generate(key: string, gtin: string, serialNumber: string, batchNumber = 'LOT1') {
  return ok(await api('POST', '/code/generate', { key, body: { gtin, serialNumber, batchNumber } }), 201) as {
    url: string;
    serial: string;
  };
}

const verify = async (key: string, url: string, location?: Json) =>
  ok(await api('POST', '/code/verify', { key, body: { url, ...(location ? { location } : {}) } }));
const forge = (url: string) => url.replace(/sig=(.)/, (_, c: string) => `sig=${c === 'A' ? 'B' : 'A'}`);

async function scans(key: string, query = '') {
  return ok(await api('GET', `/scans${query}`, { key })) as { scans: Json[]; pagination: Json };
}

/** Waits (bounded) until the projection has stored `count` scans for the key's account. */
async function scansStored(key: string, count: number) {
  await waitFor(
    'the scans to be stored',
    async () => ((await scans(key, '?limit=1000')).scans.length >= count ? true : undefined),
    {
      timeoutMs: 20_000,
    },
  );
}

async function csv(key: string, query: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${form.url}/api/v1/scans${query}`, { headers: { 'x-api-key': key, ...headers } });
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
}

/** Parses our CSV (quoted cells, doubled quotes, CRLF). */
function parse(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += c;
  }
  return rows;
}

describe.each([
  ['embedded', embedded],
  ['distributed', distributed],
])('scans API and blocklist (%s form)', (_name, start) => {
  // The analytics account's known set of scans.
  let analyst: { key: string; accountId: string; gtin: string };
  let brand: { key: string; accountId: string; gtin: string };
  let rival: { key: string; accountId: string; gtin: string };
  let authentic: { url: string; serial: string };
  let cloned: { url: string; serial: string };
  let withdrawn: { url: string; serial: string };
  let fake: { url: string; serial: string };
  let injected: { url: string; serial: string };

  beforeAll(async () => {
    form = await start();
    analyst = await account('Analyst brand', '09506000134376');
    brand = await account('Blocking brand', '09506000134383');
    rival = await account('Rival', '09506000134390');

    authentic = await generate(analyst.key, analyst.gtin, 'SA-1', 'LOT-A');
    cloned = await generate(analyst.key, analyst.gtin, 'SA-2', 'LOT-B');
    withdrawn = await generate(analyst.key, analyst.gtin, 'SA-3', 'LOT-B');
    fake = await generate(analyst.key, analyst.gtin, 'SA-4', 'LOT-B');
    injected = await generate(analyst.key, analyst.gtin, '=HYPER("x",1)', 'LOT-C');
    ok(
      await api('POST', '/blocklist', {
        key: analyst.key,
        body: { gtin: analyst.gtin, serial: 'SA-3', kind: 'withdrawn', reason: 'recalled' },
      }),
      201,
    );
    ok(
      await api('POST', '/blocklist', {
        key: analyst.key,
        body: { gtin: analyst.gtin, serial: 'SA-4', kind: 'counterfeit', reason: 'seized' },
      }),
      201,
    );
    ok(await api('POST', '/code/report', { key: rival.key, body: { url: cloned.url, reason: 'seen on a market' } }), 201);

    for (let i = 0; i < 3; i++) await verify(analyst.key, authentic.url, { latitude: 48.85, longitude: 2.35, country: 'FR' });
    for (let i = 0; i < 2; i++) {
      expect((await verify(analyst.key, forge(cloned.url), { latitude: 52.52, longitude: 13.4, country: 'DE' })).verdict).toBe(
        'COUNTERFEIT',
      );
    }
    await verify(analyst.key, withdrawn.url);
    await verify(analyst.key, fake.url);
    await verify(analyst.key, injected.url);
    await scansStored(analyst.key, 8);
  }, 240_000);

  afterAll(async () => {
    await form?.stop();
  });

  describe('GET /scans', () => {
    it('lists the account’s scans newest first, paged with a cursor', async () => {
      const all = (await scans(analyst.key)).scans;
      expect(all).toHaveLength(8);
      expect(all.map((scan) => scan.scannedAt)).toEqual([...all.map((scan) => scan.scannedAt)].sort().reverse());
      expect(all.find((scan) => scan.serial === 'SA-1')).toMatchObject({
        gtin: analyst.gtin,
        batch: 'LOT-A',
        verdict: 'AUTHENTIC',
        riskIndicators: [],
        location: { latitude: 48.85, longitude: 2.35 },
        country: 'FR',
        reported: false,
      });
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await scans(analyst.key, `?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
        expect(page.scans.length).toBeLessThanOrEqual(3);
        seen.push(...page.scans.map((scan) => scan.scanId));
        cursor = page.pagination.nextCursor;
      } while (cursor);
      expect(seen).toEqual(all.map((scan) => scan.scanId));
    });

    it('filters by verdict, flag, GTIN, serial, batch, country, reported and time', async () => {
      const count = async (query: string) => (await scans(analyst.key, query)).scans.length;
      expect(await count('?verdict=AUTHENTIC')).toBe(4);
      expect(await count('?verdict=COUNTERFEIT')).toBe(3);
      expect(await count('?verdict=SUSPICIOUS')).toBe(1);
      expect(await count('?flag=KNOWN_COUNTERFEIT_PATTERN')).toBe(2);
      // A flag beside a filter with an index of its own (the query then leaves the flagged-scans index out).
      expect(await count('?flag=KNOWN_COUNTERFEIT_PATTERN&verdict=COUNTERFEIT')).toBe(1);
      expect(await count('?flag=KNOWN_COUNTERFEIT_PATTERN&batch=LOT-B')).toBe(2);
      expect(await count('?flag=KNOWN_COUNTERFEIT_PATTERN&country=DE')).toBe(0);
      expect(await count(`?gtin=${analyst.gtin}`)).toBe(8);
      expect(await count(`?gtin=${brand.gtin}`)).toBe(0);
      expect(await count('?serial=SA-2')).toBe(2);
      expect(await count('?batch=LOT-B')).toBe(4);
      expect(await count('?country=DE')).toBe(2);
      expect(await count('?reported=true')).toBe(2);
      expect(await count('?reported=false')).toBe(6);
      const [newest] = (await scans(analyst.key, '?limit=1')).scans;
      expect(await count(`?from=${encodeURIComponent(newest?.scannedAt)}`)).toBeGreaterThanOrEqual(1);
      expect(await count(`?to=${encodeURIComponent(newest?.scannedAt)}`)).toBeLessThan(8);
      expect(await count('?from=2000-01-01T00:00:00Z&to=2000-01-02T00:00:00Z')).toBe(0);
    });

    it('refuses bad filters with the envelope and clamps a huge limit', async () => {
      refused(await api('GET', '/scans?verdict=MAYBE', { key: analyst.key }), 400, 'VALIDATION_ERROR');
      refused(await api('GET', '/scans?from=yesterday', { key: analyst.key }), 400, 'VALIDATION_ERROR');
      refused(await api('GET', '/scans?gtin=123', { key: analyst.key }), 400, 'VALIDATION_ERROR');
      refused(await api('GET', '/scans?country=fr', { key: analyst.key }), 400, 'VALIDATION_ERROR');
      refused(await api('GET', '/scans?cursor=not-a-cursor', { key: analyst.key }), 400, 'VALIDATION_ERROR');
      refused(
        await api('GET', '/scans?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', { key: analyst.key }),
        400,
        'VALIDATION_ERROR',
      );
      refused(await api('GET', '/scans?limit=0', { key: analyst.key }), 400, 'VALIDATION_ERROR');
      expect((await scans(analyst.key, '?limit=99999999')).pagination.limit).toBe(1000);
      refused(await api('GET', '/scans/aggregates?groupBy=colour', { key: analyst.key }), 400, 'VALIDATION_ERROR');
      refused(
        await api('GET', '/scans/aggregates?groupBy=verdict&bucket=hour&from=2025-01-01T00:00:00Z&to=2026-01-01T00:00:00Z', {
          key: analyst.key,
        }),
        400,
        'VALIDATION_ERROR',
      );
    });

    it('is scoped: another tenant and the test environment see none of it; assets:read is required', async () => {
      expect((await scans(rival.key)).scans).toEqual([]);
      const testKey = ok(
        await api('POST', '/keys', {
          key: analyst.key,
          body: { name: 'test env', scopes: ['assets:read'], environment: 'test' },
        }),
        201,
      ).secret as string;
      expect((await scans(testKey)).scans).toEqual([]);
      const verifyOnly = ok(
        await api('POST', '/keys', { key: analyst.key, body: { name: 'verify only', scopes: ['assets:verify'] } }),
        201,
      ).secret as string;
      refused(await api('GET', '/scans', { key: verifyOnly }), 403, 'INSUFFICIENT_SCOPE');
      refused(await api('GET', '/scans/aggregates?groupBy=verdict', { key: verifyOnly }), 403, 'INSUFFICIENT_SCOPE');
      const aggregates = ok(await api('GET', '/scans/aggregates?groupBy=verdict', { key: rival.key }));
      expect(aggregates.buckets).toEqual([]);
    });
  });

  describe('CSV export', () => {
    it('answers text/csv by Accept or ?format=csv, with a header, quoting and formula cells escaped', async () => {
      for (const [query, headers] of [
        ['?format=csv', {}],
        ['', { accept: 'text/csv' }],
      ] as const) {
        const response = await csv(analyst.key, query, headers);
        expect(response.status).toBe(200);
        expect(response.type).toMatch(/^text\/csv/);
        const rows = parse(response.text);
        expect(rows[0]).toEqual([
          'scanId',
          'scannedAt',
          'gtin',
          'serial',
          'batch',
          'verdict',
          'riskIndicators',
          'scanNumber',
          'latitude',
          'longitude',
          'country',
          'reported',
          'scannedBy',
        ]);
        expect(rows).toHaveLength(9);
        const formula = rows.find((row) => row[3]?.includes('HYPER'));
        expect(formula?.[3]).toBe(`'=HYPER("x",1)`);
        expect(response.text).toContain(`"'=HYPER(""x"",1)"`);
        expect(rows.find((row) => row[3] === 'SA-4')).toEqual(
          expect.arrayContaining(['COUNTERFEIT', 'KNOWN_COUNTERFEIT_PATTERN']),
        );
      }
      const filtered = parse((await csv(analyst.key, '?format=csv&country=FR')).text);
      expect(filtered).toHaveLength(4);
      refused(await api('GET', '/scans?format=xml', { key: analyst.key }), 400, 'VALIDATION_ERROR');
      // A query verify-service refuses is refused before any CSV is sent.
      const badRange = await csv(analyst.key, '?format=csv&from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z');
      expect(badRange.status).toBe(400);
      expect(JSON.parse(badRange.text).error.code).toBe('VALIDATION_ERROR');
    });

    it('streams every row of a set larger than a page, in order', async () => {
      const bulk = await account('Bulk brand', '09506000134369');
      const rows = 2_345;
      await form.query(
        `INSERT INTO scans (scan_id, environment, account_id, gtin, serial, verdict, risk_indicators, scan_number, scanned_at, verified_by)
         SELECT gen_random_uuid(), 'live', $1, $2, 'B' || n, 'AUTHENTIC', '{}', 1, now() - n * interval '1 second', $1
           FROM generate_series(1, $3::int) AS n`,
        [bulk.accountId, bulk.gtin, rows],
      );
      const response = await fetch(`${form.url}/api/v1/scans?format=csv`, { headers: { 'x-api-key': bulk.key } });
      expect(response.headers.get('content-type')).toMatch(/^text\/csv/);
      // Read as a stream: the body arrives in several chunks, not one buffered answer.
      let chunks = 0;
      let text = '';
      const decoder = new TextDecoder();
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        chunks += 1;
        text += decoder.decode(chunk, { stream: true });
      }
      expect(chunks).toBeGreaterThan(1);
      const lines = parse(text).slice(1);
      expect(lines).toHaveLength(rows);
      expect(lines.map((line) => line[3])).toEqual(Array.from({ length: rows }, (_, i) => `B${i + 1}`));

      // HEAD: the export's status and headers, without the export behind them (Node drops a HEAD's
      // body as it is written: nothing paced the pages, and each HEAD read every one of them).
      const statements = form.countStatements?.('FROM scans');
      const head = await fetch(`${form.url}/api/v1/scans?format=csv`, { method: 'HEAD', headers: { 'x-api-key': bulk.key } });
      expect([head.status, head.headers.get('content-type')]).toEqual([200, 'text/csv; charset=utf-8']);
      const badHead = await fetch(`${form.url}/api/v1/scans?format=csv&from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z`, {
        method: 'HEAD',
        headers: { 'x-api-key': bulk.key },
      });
      expect(badHead.status).toBe(400);
      await new Promise((resolve) => setTimeout(resolve, 500));
      statements?.stop();
      // One page read for the HEAD (its query checked), none for the refused one; the GET read three.
      if (statements) expect(statements.count()).toBe(1);
    });
  });

  describe('aggregates', () => {
    it('counts by verdict and flag per day and hour, countries and top codes, matching the known set', async () => {
      const byVerdict = ok(await api('GET', '/scans/aggregates?groupBy=verdict&bucket=day', { key: analyst.key }));
      const sum = (buckets: Json[]) => {
        const total: Record<string, number> = {};
        for (const bucket of buckets)
          for (const [key, n] of Object.entries(bucket.counts as Record<string, number>)) total[key] = (total[key] ?? 0) + n;
        return total;
      };
      expect(sum(byVerdict.buckets)).toEqual({ AUTHENTIC: 4, COUNTERFEIT: 3, SUSPICIOUS: 1 });
      for (const bucket of byVerdict.buckets) expect(bucket.start).toMatch(/T00:00:00\.000Z$/);
      const byHour = ok(await api('GET', '/scans/aggregates?groupBy=verdict&bucket=hour', { key: analyst.key }));
      expect(sum(byHour.buckets)).toEqual({ AUTHENTIC: 4, COUNTERFEIT: 3, SUSPICIOUS: 1 });
      for (const bucket of byHour.buckets) expect(bucket.start).toMatch(/:00:00\.000Z$/);
      const byFlag = ok(await api('GET', '/scans/aggregates?groupBy=flag&bucket=day', { key: analyst.key }));
      expect(sum(byFlag.buckets)).toEqual({ KNOWN_COUNTERFEIT_PATTERN: 2 });
      const countries = ok(await api('GET', '/scans/countries', { key: analyst.key }));
      expect(countries.countries).toEqual([
        { country: 'FR', scans: 3 },
        { country: 'DE', scans: 2 },
      ]);
      const top = ok(await api('GET', '/scans/top-codes', { key: analyst.key }));
      expect(top.codes.map((code: Json) => [code.serial, code.suspicious, code.counterfeit])).toEqual([
        ['SA-2', 0, 2],
        ['SA-3', 1, 0],
        ['SA-4', 0, 1],
      ]);
      const past = ok(
        await api('GET', '/scans/aggregates?groupBy=verdict&from=2020-01-01T00:00:00Z&to=2020-02-01T00:00:00Z', {
          key: analyst.key,
        }),
      );
      expect(past.buckets).toEqual([]);
    });
  });

  describe('blocklist', () => {
    let codes: { url: string; serial: string }[];
    const events = async () =>
      (
        await form.query<{ event_type: string; data: Json }>(
          `SELECT event_type, data FROM event_log WHERE stream_id = $1 AND event_type LIKE 'code.%blocked' ORDER BY global_position`,
          [`account-${brand.accountId}-live`],
        )
      ).map((row) => ({ type: row.event_type, blockId: row.data.blockId, serialFrom: row.data.serialFrom }));

    beforeAll(async () => {
      codes = [];
      for (const serial of ['R0001', 'R0002', 'R0003', 'R0004', 'R0005'])
        codes.push(await generate(brand.key, brand.gtin, serial));
    });

    it('a counterfeit block answers COUNTERFEIT with the reason; unblocking restores AUTHENTIC', async () => {
      const code = codes[0] as { url: string };
      expect((await verify(brand.key, code.url)).verdict).toBe('AUTHENTIC');
      const block = ok(
        await api('POST', '/blocklist', {
          key: brand.key,
          body: { gtin: brand.gtin, serial: 'R0001', kind: 'counterfeit', reason: 'cloned label' },
        }),
        201,
      );
      expect(block).toMatchObject({
        blockId: expect.stringMatching(/^blk_/),
        serialFrom: 'R0001',
        serialTo: 'R0001',
        status: 'active',
        removedAt: null,
      });
      const blocked = await verify(brand.key, code.url);
      expect(blocked).toMatchObject({
        verdict: 'COUNTERFEIT',
        riskIndicators: expect.arrayContaining(['KNOWN_COUNTERFEIT_PATTERN']),
        blocked: { blockId: block.blockId, kind: 'counterfeit', reason: 'cloned label' },
      });
      const removed = ok(await api('DELETE', `/blocklist/${block.blockId}`, { key: brand.key }));
      expect(removed).toMatchObject({ status: 'removed', removedAt: expect.any(String) });
      const after = await verify(brand.key, code.url);
      expect(after.blocked).toBeUndefined();
      expect(after.riskIndicators).not.toContain('KNOWN_COUNTERFEIT_PATTERN');
      expect(ok(await api('DELETE', `/blocklist/${block.blockId}`, { key: brand.key })).status).toBe('removed');
      const recorded = (await events()).filter((event) => event.blockId === block.blockId);
      expect(recorded.map((event) => event.type)).toEqual(['code.blocked', 'code.unblocked']);
    });

    it('a withdrawn serial range answers SUSPICIOUS inside the range only', async () => {
      ok(
        await api('POST', '/blocklist', {
          key: brand.key,
          body: { gtin: brand.gtin, serialFrom: 'R0002', serialTo: 'R0004', kind: 'withdrawn', reason: 'recall 7' },
        }),
        201,
      );
      for (const [index, verdict] of [
        [1, 'SUSPICIOUS'],
        [3, 'SUSPICIOUS'],
        [4, 'AUTHENTIC'],
      ] as const) {
        const result = await verify(brand.key, (codes[index] as { url: string }).url);
        expect(result.verdict, String(index)).toBe(verdict);
        if (verdict === 'SUSPICIOUS')
          expect(result).toMatchObject({
            riskIndicators: ['KNOWN_COUNTERFEIT_PATTERN'],
            blocked: { kind: 'withdrawn', reason: 'recall 7' },
          });
      }
      // The reason and the block's id are the owner's notes: another account's key and the public
      // resolver's JSON get the same verdict, the kind of block and its time, not the words.
      const recalled = (codes[1] as { url: string }).url;
      const seenByRival = await verify(rival.key, recalled);
      expect(seenByRival).toMatchObject({ verdict: 'SUSPICIOUS', riskIndicators: ['KNOWN_COUNTERFEIT_PATTERN'] });
      expect(seenByRival.blocked).toEqual({ kind: 'withdrawn', blockedAt: expect.any(String) });
      const { pathname, search } = new URL(recalled);
      const publicJson = await fetch(`${form.url}/verify${pathname}${search}`, { headers: { accept: 'application/json' } });
      const publicText = await publicJson.text();
      expect(publicJson.status, publicText).toBe(200);
      expect(JSON.parse(publicText)).toMatchObject({ verdict: 'SUSPICIOUS', blocked: { kind: 'withdrawn' } });
      expect(publicText).not.toContain('recall 7');
      expect(publicText).not.toContain('blk_');
      const mismatched = await api('POST', '/blocklist', {
        key: brand.key,
        body: { gtin: brand.gtin, serialFrom: 'R9', serialTo: 'R0001', kind: 'withdrawn' },
      });
      refused(mismatched, 400, 'VALIDATION_ERROR');
      // Each refusal names the field it is about, as the request named it.
      expect(mismatched.body.error?.details?.field).toBe('serialTo');
      const badEnd = await api('POST', '/blocklist', {
        key: brand.key,
        body: { gtin: brand.gtin, serialFrom: 'R0001', serialTo: 'R 002', kind: 'withdrawn' },
      });
      refused(badEnd, 400, 'VALIDATION_ERROR');
      expect(badEnd.body.error?.details?.field).toBe('serialTo');
      const badSingle = await api('POST', '/blocklist', {
        key: brand.key,
        body: { gtin: brand.gtin, serial: 'R 1', kind: 'withdrawn' },
      });
      refused(badSingle, 400, 'VALIDATION_ERROR');
      expect(badSingle.body.error?.details?.field).toBe('serial');
      refused(
        await api('POST', '/blocklist', {
          key: brand.key,
          body: { gtin: brand.gtin, serial: 'R1', serialFrom: 'R1', serialTo: 'R2', kind: 'withdrawn' },
        }),
        400,
        'VALIDATION_ERROR',
      );
    });

    it('blocks in bulk from CSV, line by line', async () => {
      const body = [
        'gtin,serial,kind,reason',
        `${brand.gtin},R0005,counterfeit,"seized, lot ""9"""`,
        '09506000134370,X1,withdrawn,bad check digit',
        `${rival.gtin},X2,counterfeit,not mine`,
        `${brand.gtin},X3,stolen,unknown kind`,
      ].join('\r\n');
      const response = await fetch(`${form.url}/api/v1/blocklist/bulk`, {
        method: 'POST',
        headers: { 'x-api-key': brand.key, 'content-type': 'text/csv' },
        body,
      });
      const answer = (await response.json()) as Json;
      expect(response.status, JSON.stringify(answer)).toBe(200);
      expect(answer.results.map((result: Json) => [result.line, result.block?.serialFrom ?? result.error.code])).toEqual([
        [2, 'R0005'],
        [3, 'INVALID_GTIN'],
        [4, 'GTIN_NOT_OWNED'],
        [5, 'VALIDATION_ERROR'],
      ]);
      expect(answer.results[0].block.reason).toBe('seized, lot "9"');
      expect((await verify(brand.key, (codes[4] as { url: string }).url)).verdict).toBe('COUNTERFEIT');
      const unsupported = await fetch(`${form.url}/api/v1/blocklist/bulk`, {
        method: 'POST',
        headers: { 'x-api-key': brand.key, 'content-type': 'application/xml' },
        body: '<x/>',
      });
      expect(unsupported.status).toBe(415);
      const badHeader = await fetch(`${form.url}/api/v1/blocklist/bulk`, {
        method: 'POST',
        headers: { 'x-api-key': brand.key, 'content-type': 'text/csv' },
        body: 'gtin,colour\n1,2',
      });
      expect(badHeader.status).toBe(400);
      // A column named twice: its second value replaced the first on every line, so a blocklist
      // sent as withdrawn went in as the later column's kind. Refused whole, naming the column.
      const repeatedColumn = await fetch(`${form.url}/api/v1/blocklist/bulk`, {
        method: 'POST',
        headers: { 'x-api-key': brand.key, 'content-type': 'text/csv' },
        body: `gtin,serial,kind,kind\n${brand.gtin},R0006,withdrawn,counterfeit\n`,
      });
      const repeated = (await repeatedColumn.json()) as Json;
      expect([repeatedColumn.status, repeated.error.code, repeated.error.details]).toEqual([
        400,
        'VALIDATION_ERROR',
        { repeatedColumns: ['kind'] },
      ]);
      expect(
        ok(await api('GET', '/blocklist?limit=100', { key: brand.key })).blocks.map((block: Json) => block.serialFrom),
      ).not.toContain('R0006');
    });

    it('names each bulk result by the line its record starts on, blank lines and quoted line breaks counted', async () => {
      const lined = await account('Brand with a long recall list', '09506000134413');
      // Blank lines were dropped before the records were numbered: a refusal on line 4 said line 2,
      // and a brand fixing a long upload edited the wrong serial (a review of 2026-12-05).
      // A spreadsheet's empty rows (`,,,`) are skipped as blank lines are, and counted as lines too.
      const body = `gtin,serial,kind,reason\n\n\n${lined.gtin},BAD SERIAL,counterfeit,x\n${lined.gtin},L0001,withdrawn,"two\nlines"\n,,,\n${lined.gtin},L0002,withdrawn,y\n,,,\n`;
      const response = await fetch(`${form.url}/api/v1/blocklist/bulk`, {
        method: 'POST',
        headers: { 'x-api-key': lined.key, 'content-type': 'text/csv' },
        body,
      });
      const answer = (await response.json()) as Json;
      expect(response.status, JSON.stringify(answer)).toBe(200);
      expect(answer.results.map((result: Json) => [result.line, result.block?.serialFrom ?? result.error.code])).toEqual([
        [4, 'VALIDATION_ERROR'],
        [5, 'L0001'],
        [8, 'L0002'],
      ]);
      // A CSV that cannot be read is refused whole, naming where: nothing of it is blocked.
      const unreadable = await fetch(`${form.url}/api/v1/blocklist/bulk`, {
        method: 'POST',
        headers: { 'x-api-key': brand.key, 'content-type': 'text/csv' },
        body: `gtin,serial,kind\n${brand.gtin},L0003,withdrawn\n${brand.gtin},"L0004"x,withdrawn\n`,
      });
      const refusal = (await unreadable.json()) as Json;
      expect([unreadable.status, refusal.error.code, refusal.error.details]).toEqual([400, 'VALIDATION_ERROR', { line: 3 }]);
      expect(refusal.error.message).toBe(
        'The CSV cannot be read: line 3: text after a closing quote (a quote inside a field is written "").',
      );
      expect(
        ok(await api('GET', '/blocklist?limit=100', { key: brand.key })).blocks.map((block: Json) => block.serialFrom),
      ).not.toContain('L0003');
    });

    it('refuses another tenant’s GTIN, lists only the account’s blocks, and records every change', async () => {
      refused(
        await api('POST', '/blocklist', { key: rival.key, body: { gtin: brand.gtin, serial: 'R0001', kind: 'counterfeit' } }),
        403,
        'GTIN_NOT_OWNED',
      );
      refused(
        await api('POST', '/blocklist', { key: brand.key, body: { gtin: '09506000134370', serial: 'R1', kind: 'counterfeit' } }),
        400,
        'INVALID_GTIN',
      );
      const mine = ok(await api('GET', '/blocklist', { key: brand.key }));
      expect(mine.blocks.map((block: Json) => [block.serialFrom, block.status])).toEqual([
        ['R0005', 'active'],
        ['R0002', 'active'],
        ['R0001', 'removed'],
      ]);
      expect(ok(await api('GET', '/blocklist?status=active&limit=1', { key: brand.key })).pagination.hasMore).toBe(true);
      expect(ok(await api('GET', '/blocklist', { key: rival.key })).blocks).toEqual([]);
      const blockId = mine.blocks[0].blockId as string;
      refused(await api('DELETE', `/blocklist/${blockId}`, { key: rival.key }), 404, 'NOT_FOUND');
      expect((await events()).map((event) => event.type)).toEqual([
        'code.blocked',
        'code.unblocked',
        'code.blocked',
        'code.blocked',
      ]);
    });

    it('caps an account’s active blocks, also against requests at once; a removal frees a place', async () => {
      const capped = await account('Capped brand', '09506000134406');
      const blocked = async () =>
        (
          await form.query<{ blocked: number }>(
            `SELECT count(*)::int AS blocked FROM event_log WHERE stream_id = $1 AND event_type = 'code.blocked'`,
            [`account-${capped.accountId}-live`],
          )
        )[0]?.blocked;
      // Eight at once for five places: exactly five are recorded, each with its event.
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          api('POST', '/blocklist', { key: capped.key, body: { gtin: capped.gtin, serial: `C${i}`, kind: 'counterfeit' } }),
        ),
      );
      expect(answers.map((answer) => answer.status).sort()).toEqual([201, 201, 201, 201, 201, 409, 409, 409]);
      const refusal = answers.find((answer) => answer.status === 409) as { status: number; body: Json };
      refused(refusal, 409, 'CONFLICT');
      expect(refusal.body.error.details).toEqual({ limit: maxActiveBlocks });
      expect(await blocked()).toBe(maxActiveBlocks);
      expect(ok(await api('GET', '/blocklist?status=active', { key: capped.key })).blocks).toHaveLength(maxActiveBlocks);
      // A range is one block too; in bulk, each line over the cap is refused on its own.
      const bulk = await fetch(`${form.url}/api/v1/blocklist/bulk`, {
        method: 'POST',
        headers: { 'x-api-key': capped.key, 'content-type': 'text/csv' },
        body: `gtin,serialFrom,serialTo,kind\r\n${capped.gtin},D000,D999,withdrawn\r\n`,
      });
      expect(((await bulk.json()) as Json).results).toEqual([{ line: 2, error: expect.objectContaining({ code: 'CONFLICT' }) }]);
      // Another account's places are its own.
      ok(await api('POST', '/blocklist', { key: rival.key, body: { gtin: rival.gtin, serial: 'V1', kind: 'withdrawn' } }), 201);
      const oneOf = answers.find((answer) => answer.status === 201) as { body: Json };
      ok(await api('DELETE', `/blocklist/${oneOf.body.blockId}`, { key: capped.key }));
      // Removing it again frees nothing more.
      ok(await api('DELETE', `/blocklist/${oneOf.body.blockId}`, { key: capped.key }));
      const range = ok(
        await api('POST', '/blocklist', {
          key: capped.key,
          body: { gtin: capped.gtin, serialFrom: 'D000', serialTo: 'D999', kind: 'withdrawn' },
        }),
        201,
      );
      expect(range.serialTo).toBe('D999');
      refused(
        await api('POST', '/blocklist', { key: capped.key, body: { gtin: capped.gtin, serial: 'E1', kind: 'counterfeit' } }),
        409,
        'CONFLICT',
      );
      expect(await blocked()).toBe(maxActiveBlocks + 1);
    });
  });
});
