// The auditor's reads under attack: the compliance export (GET /compliance/{assetId}/export,
// services/gateway/src/routes/compliance.ts and compliance-export.ts, compliance-service's
// exportPage) and the per-asset verify / Merkle root / proof / consistency reads. From a review of
// 2026-12-05 that found a HEAD running the whole export and the CSV's data cell a formula's way in.
import { request as httpRequest } from 'node:http';
import { auditExport, type ComplianceExportDocument, type JsonWebKeySet } from '@hallmark/client';
import { parseCsv } from '@hallmark/contracts';
import { verifyConsistency } from '@hallmark/merkle';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';
import { waitFor } from '../support/wait.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let t: TestProduct;
let operator: string;
let house: string;
let houseAccountId: string;
/** An auction object with 121 events of ~15 KB: four export pages (compliance-service pages are ≤ 600 KB). */
let bigObject: string;
let bigEventIds: string[];
let bigSerial: string;

const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(t.url, method, `/api/v1${path}`, options);

/** GTIN-14 `0950600017<n>` with its check digit: a GTIN no other test of this file uses. */
function gtinNumbered(n: number): string {
  const body = `0950600017${String(n).padStart(3, '0')}`;
  let sum = 0;
  for (let i = 0; i < 13; i++) sum += Number(body[i]) * (i % 2 === 0 ? 3 : 1);
  return `${body}${(10 - (sum % 10)) % 10}`;
}

async function account(name: string, gtin?: string): Promise<{ key: string; id: string }> {
  const created = await api('POST', '/accounts', { key: operator, body: { name, tier: 'enterprise' } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  if (gtin) {
    const grant = await api('POST', `/accounts/${created.body.account.id}/gtins`, { key: operator, body: { gtin } });
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);
  }
  return { key: created.body.apiKey.secret as string, id: created.body.account.id as string };
}

async function register(key: string, title: string): Promise<Json> {
  const registered = await api('POST', '/auction/objects/register', {
    key,
    body: { title, category: 'watch', ownerId: 'client-review' },
  });
  expect(registered.status, JSON.stringify(registered.body)).toBe(201);
  return registered.body.object;
}

async function record(key: string, objectId: string, index: number, large = true): Promise<void> {
  const recorded = await api('POST', '/auction/provenance/events', {
    key,
    body: {
      objectId,
      eventType: 'cataloged',
      actorRole: 'auction_house',
      // 5,000 '€' are 15,000 bytes in UTF-8: ~40 events fill a 600 KB export page.
      evidence: { report: large ? `${'€'.repeat(5_000)}-${index}` : `note-${index}` },
    },
  });
  expect(recorded.status, JSON.stringify(recorded.body).slice(0, 300)).toBe(201);
}

/** The `rpc answered` debug lines compliance-service wrote for one gateway request's exportPage calls. */
const exportPageCalls = (requestId: string) =>
  t.logLines.filter((line) => line.includes(`"requestId":"${requestId}"`) && line.includes('"rpc":"exportPage"')).length;

/** Waits until the count of a request's exportPage calls has not moved for 600 ms. */
async function settledExportPageCalls(requestId: string): Promise<number> {
  let last = -1;
  for (;;) {
    const now = exportPageCalls(requestId);
    if (now === last) return now;
    last = now;
    await new Promise((resolve) => setTimeout(resolve, 600));
  }
}

const jwks = async () => (await call(t.url, 'GET', '/.well-known/jwks.json')).body as unknown as JsonWebKeySet;

beforeAll(async () => {
  t = await startTestProduct();
  operator = t.product.generatedOperatorKey as string;
  const created = await account('Review export house');
  house = created.key;
  houseAccountId = created.id;
  const object = await register(house, 'Daytona review');
  bigObject = object.id;
  bigSerial = object.service_serial;
  for (let index = 0; index < 120; index++) await record(house, bigObject, index);
  const exported = await api('GET', `/compliance/${bigObject}/export`, { key: house });
  expect(exported.status).toBe(200);
  expect(exported.body.treeSize).toBe(121);
  bigEventIds = (exported.body.events as Json[]).map((event) => event.eventId);
}, 180_000);

afterAll(async () => {
  await t?.stop();
});

describe('HEAD on a compliance export', () => {
  it('answers the status and headers after the first page, without running the whole export', async () => {
    const get = await fetch(`${t.url}/api/v1/compliance/${bigObject}/export`, { headers: { 'x-api-key': house } });
    const body = await get.text();
    expect(get.status).toBe(200);
    expect(JSON.parse(body).events).toHaveLength(121);
    const getPages = await settledExportPageCalls(get.headers.get('x-request-id') as string);
    // Sanity: the GET read the history page by page (121 events of 15 KB: 4 pages of ≤ 600 KB).
    expect(getPages).toBeGreaterThanOrEqual(4);

    const head = await fetch(`${t.url}/api/v1/compliance/${bigObject}/export`, {
      method: 'HEAD',
      headers: { 'x-api-key': house },
    });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toMatch(/^application\/json/);
    expect(head.headers.get('content-disposition')).toBe(`attachment; filename="${bigObject}-121.json"`);
    expect(await head.text()).toBe('');
    const headPages = await settledExportPageCalls(head.headers.get('x-request-id') as string);
    // The first page decides the status (404, 503) and the headers (the tree size in the file
    // name); nothing after it is sent. The scans CSV export stops there for HEAD (docs/API.md,
    // "CSV": "HEAD answers the same status and headers after checking the query (its first page),
    // without running the export"); the compliance export reads every page of the history, at
    // the store's speed (no client reads it to pace it), for a body Node throws away.
    expect(headPages, `HEAD read ${headPages} export pages; GET read ${getPages}`).toBeLessThanOrEqual(1);
  });
});

describe('an export while the history grows', () => {
  it('holds exactly the first page’s tree, audits valid offline, and the later tree extends it', async () => {
    const object = await register(house, 'Submariner review');
    for (let index = 0; index < 80; index++) await record(house, object.id, index);

    // Start the export and read only its first bytes, then write while the rest is still to come.
    const response = await fetch(`${t.url}/api/v1/compliance/${object.id}/export?format=json`, {
      headers: { 'x-api-key': house },
    });
    expect(response.status).toBe(200);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const chunks: Uint8Array[] = [];
    const first = await reader.read();
    if (first.value) chunks.push(first.value);
    const writes = Array.from({ length: 12 }, (_, index) => index);
    for (const index of writes) await record(house, object.id, 1_000 + index, false);
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      chunks.push(next.value);
    }
    const document = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ComplianceExportDocument & Json;
    expect(document.treeSize).toBe(81);
    expect(document.events.map((event: Json) => event.leafIndex)).toEqual(Array.from({ length: 81 }, (_, i) => i));
    expect(document.events.map((event: Json) => event.sequence)).toEqual(Array.from({ length: 81 }, (_, i) => i + 1));
    const keys = await jwks();
    const report = auditExport(document, keys);
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({ valid: true, treeSize: 81 });

    // The tree after the writes extends the exported one (the consistency proof verifies) and its
    // export audits too.
    const later = await api('GET', `/compliance/${object.id}/export`, { key: house });
    expect(later.body.treeSize).toBe(93);
    expect(auditExport(later.body as unknown as ComplianceExportDocument, keys)).toMatchObject({ valid: true, treeSize: 93 });
    const consistency = await api('GET', `/compliance/${object.id}/merkle/consistency?from=81&to=93`, { key: house });
    expect(consistency.status).toBe(200);
    expect(consistency.body.fromRootHash).toBe(document.rootHash);
    expect(
      verifyConsistency(
        81,
        93,
        Buffer.from(consistency.body.fromRootHash, 'hex'),
        Buffer.from(consistency.body.toRootHash, 'hex'),
        (consistency.body.proof as string[]).map((hash) => Buffer.from(hash, 'hex')),
      ),
    ).toBe(true);
  });
});

describe('who may read an asset’s compliance data', () => {
  it('needs documents:read, and a test key of the same account sees none of its live assets', async () => {
    const key = async (scopes: string[], environment?: 'test' | 'live') => {
      const created = await api('POST', '/keys', {
        key: house,
        body: { name: `review ${scopes.join(' ')} ${environment ?? ''}`, scopes, ...(environment ? { environment } : {}) },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      return created.body.secret as string;
    };
    const eventId = bigEventIds[7];
    const reads = [
      `/compliance/${bigObject}/verify`,
      `/compliance/${bigObject}/merkle/root`,
      `/compliance/${bigObject}/merkle/proof?eventId=${eventId}`,
      `/compliance/${bigObject}/merkle/consistency?from=1`,
      `/compliance/${bigObject}/export`,
      `/compliance/${bigObject}/export?format=csv`,
      `/compliance/${bigObject}/export?format=epcis`,
    ];
    for (const scopes of [
      ['assets:read'],
      ['assets:create'],
      ['assets:verify'],
      ['compliance:write'],
      ['schemas:read', 'keys:read'],
    ]) {
      const narrow = await key(scopes);
      for (const path of reads) {
        for (const method of ['GET', 'HEAD']) {
          const answer = await fetch(`${t.url}/api/v1${path}`, { method, headers: { 'x-api-key': narrow } });
          const text = await answer.text();
          expect(answer.status, `${method} ${path} with ${scopes}: ${text.slice(0, 200)}`).toBe(403);
          if (method === 'GET') {
            expect(JSON.parse(text).error).toMatchObject({ code: 'INSUFFICIENT_SCOPE' });
            expect(text).not.toContain(eventId);
            expect(text).not.toContain('€');
          }
        }
      }
    }
    const auditor = await key(['documents:read']);
    for (const path of reads) {
      const answer = await fetch(`${t.url}/api/v1${path}`, { headers: { 'x-api-key': auditor } });
      await answer.text();
      expect(answer.status, path).toBe(200);
    }

    // The same account's test environment: its `*` key (made by the live `*` key) sees nothing live.
    const testStar = await key(['*'], 'test');
    expect(testStar.startsWith('svc_test_')).toBe(true);
    for (const path of reads) {
      const answer = await fetch(`${t.url}/api/v1${path}`, { headers: { 'x-api-key': testStar } });
      const text = await answer.text();
      expect(answer.status, `${path}: ${text.slice(0, 200)}`).toBe(404);
      expect(JSON.parse(text).error?.code).toBe('NOT_FOUND');
      expect(text).not.toContain(houseAccountId);
    }
    // … nor by the object's service serial.
    const serial = bigSerial;
    expect(serial).toMatch(/^HM-/);
    expect((await api('GET', `/compliance/${serial}/export`, { key: testStar })).status).toBe(404);
    expect((await api('GET', `/compliance/${serial}/merkle/root`, { key: testStar })).status).toBe(404);
    expect((await api('GET', `/compliance/${serial}/export`, { key: auditor })).status).toBe(200);
  });

  it('another account cannot read the history by id, serial or event id, and the answer is the unknown asset’s', async () => {
    const other = await account('Review other house');
    const serial = bigSerial;
    const ownObject = await register(other.key, 'Other review object');
    const unknown = await api('GET', '/compliance/obj_00000000000000000000/export', { key: other.key });
    expect(unknown.status).toBe(404);
    for (const path of [
      `/compliance/${bigObject}/export`,
      `/compliance/${bigObject}/export?format=csv`,
      `/compliance/${serial}/export?format=epcis`,
      `/compliance/${bigObject}/merkle/proof?eventId=${bigEventIds[3]}`,
      // Its own asset with the house's event: the event is another asset's, so 404.
      `/compliance/${ownObject.id}/merkle/proof?eventId=${bigEventIds[3]}`,
      `/compliance/${bigObject}/merkle/consistency?from=1&to=2`,
      `/compliance/${bigObject}/verify`,
    ]) {
      const answer = await api('GET', path, { key: other.key });
      expect(answer.status, path).toBe(404);
      expect(answer.body.error?.code).toBe('NOT_FOUND');
      const text = JSON.stringify(answer.body);
      expect(text).not.toContain(houseAccountId);
      expect(text).not.toContain('€');
    }
  });
});

describe('tampered export and proof parameters', () => {
  it('answers 400 VALIDATION_ERROR (never 500, never a partial body) to bad formats, paging knobs and sizes', async () => {
    const base = `/compliance/${bigObject}`;
    const refused = [
      `${base}/export?format=CSV`,
      `${base}/export?format=ndjson`,
      `${base}/export?format=json&format=csv`,
      `${base}/export?format=`,
      `${base}/export?format[]=csv`,
      `${base}/export?format=csv%00`,
      `${base}/export?cursor=abc`,
      `${base}/export?fromLeafIndex=-5`,
      `${base}/export?treeSize=99999`,
      `${base}/export?limit=100000`,
      `${base}/merkle/consistency?from=-1`,
      `${base}/merkle/consistency?from=1e309`,
      `${base}/merkle/consistency?from=1.5`,
      `${base}/merkle/consistency?from=1&from=2`,
      `${base}/merkle/consistency?from=2147483647`,
      `${base}/merkle/consistency?from=1&to=2147483647`,
      `${base}/merkle/consistency?from=1&to=9007199254740993`,
      `${base}/merkle/consistency?from=5&to=4`,
      `${base}/merkle/proof?eventId=%00`,
      `${base}/merkle/proof?eventId=a&eventId=b`,
      `${base}/merkle/proof?eventId=${'a'.repeat(129)}`,
    ];
    for (const path of refused) {
      const answer = await api('GET', path, { key: house });
      expect(answer.status, `${path}: ${JSON.stringify(answer.body).slice(0, 200)}`).toBe(400);
      expect(answer.body.error?.code, path).toBe('VALIDATION_ERROR');
      expect(answer.body.meta?.requestId, path).toEqual(expect.any(String));
    }
    // Event ids that are not this asset's: 404, whatever their spelling.
    for (const eventId of [
      '%ED%A0%80',
      '%F0%9F%98%80',
      `${bigEventIds[0]}%20`,
      (bigEventIds[0] as string).toUpperCase(),
      "'%20OR%201=1--",
    ]) {
      const answer = await api('GET', `${base}/merkle/proof?eventId=${eventId}`, { key: house });
      expect([400, 404], `${eventId}: ${JSON.stringify(answer.body).slice(0, 200)}`).toContain(answer.status);
    }
    // Accept headers the export does not speak: never a 500; the body is still one of the documented formats.
    for (const accept of ['text/csv', 'application/xml', 'application/x-ndjson', '*/*;q=0', 'application/json;q=0']) {
      const answer = await fetch(`${t.url}/api/v1${base}/export`, { headers: { 'x-api-key': house, accept } });
      const text = await answer.text();
      expect(answer.status, accept).toBeLessThan(500);
      if (answer.status === 200) expect(JSON.parse(text).format).toBe('hallmark.compliance-export/1');
    }
  });
});

describe('a client that leaves mid-export', () => {
  it('stops the export it left and the server answers the next export in full', async () => {
    const left = await new Promise<{ requestId: string; bytes: number }>((resolve, reject) => {
      const url = new URL(`${t.url}/api/v1/compliance/${bigObject}/export?format=csv`);
      const request = httpRequest(url, { headers: { 'x-api-key': house } }, (response) => {
        let bytes = 0;
        response.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (bytes > 64 * 1024) {
            request.destroy();
            resolve({ requestId: response.headers['x-request-id'] as string, bytes });
          }
        });
        response.on('error', () => {});
        response.on('end', () => reject(new Error('the export ended before the client left')));
      });
      request.on('error', () => {});
      request.end();
    });
    const calls = await settledExportPageCalls(left.requestId);
    expect(calls).toBeGreaterThanOrEqual(1);
    expect(calls).toBeLessThanOrEqual(4);
    const again = await fetch(`${t.url}/api/v1/compliance/${bigObject}/export?format=csv`, { headers: { 'x-api-key': house } });
    const text = await again.text();
    expect(again.status).toBe(200);
    // Header, checkpoint row, 121 event rows, and the empty string after the last CRLF.
    expect(text.split('\r\n').filter((line) => line.startsWith('event,'))).toHaveLength(121);
    const health = await waitFor('health', async () => {
      const answer = await fetch(`${t.url}/health`);
      return answer.status === 200 ? answer : undefined;
    });
    expect(health.status).toBe(200);
  });
});

describe('the CSV export of a code history holding a reporter’s words', () => {
  it('writes no cell a `;`-separated spreadsheet would run as a formula (docs/API.md, CSV formula injection)', async () => {
    const gtin = gtinNumbered(1);
    const brand = await account('Review CSV brand', gtin);
    const stranger = await account('Review CSV stranger');
    const generated = await api('POST', '/code/generate', {
      key: brand.key,
      body: { gtin, serialNumber: 'REVIEW-CSV-1', batchNumber: 'B1' },
    });
    expect(generated.status, JSON.stringify(generated.body)).toBe(201);
    const { assetId, url } = generated.body;
    // Anyone with an assets:verify key (another account here; a resolver visitor alike) may report,
    // and the reporter's words go into the code's history when the brand dismisses the report.
    // No double quote in it, so JSON and CSV leave the part after each `;` as it was typed.
    const payload = 'label looks off;=1+1;@SUM(2+2);ok';
    const report = await api('POST', '/code/report', { key: stranger.key, body: { url, reason: payload } });
    expect(report.status, JSON.stringify(report.body)).toBe(201);
    const dismissed = await api('POST', `/code/reports/${report.body.reportId}/dismiss`, {
      key: brand.key,
      body: { reason: 'checked the label' },
    });
    expect(dismissed.status, JSON.stringify(dismissed.body)).toBe(200);

    const json = await api('GET', `/compliance/${assetId}/export?format=json`, { key: brand.key });
    expect(json.body.events.map((event: Json) => event.type)).toEqual(['code.generated', 'code.report-dismissed']);
    expect(json.body.events[1].data.reportReason).toBe(payload);

    const csv = await fetch(`${t.url}/api/v1/compliance/${assetId}/export?format=csv`, { headers: { 'x-api-key': brand.key } });
    expect(csv.status).toBe(200);
    const text = await csv.text();
    const row = text.split('\r\n').find((line) => line.startsWith('event,1,')) as string;
    expect(row).toBeDefined();
    // What the scans CSV guards against (services/gateway/src/routes/scans.ts, csvCell): split on
    // `;` as Excel in a `;` locale does, quotes or not; no part may start (after quotes) with = + - @.
    const runnable = row
      .split(';')
      .slice(1)
      .map((part) => part.replace(/^"+/, ''))
      .filter((part) => /^[=+\-@\t\r]/.test(part));
    expect(runnable, `row: ${row.slice(0, 400)}`).toEqual([]);
    // The cell is still the event's data, exactly, once read as CSV and parsed as JSON.
    const [header, checkpoint, ...events] = [...parseCsv(text)];
    expect(checkpoint?.fields[0]).toBe('checkpoint');
    const dataColumn = header?.fields.indexOf('data') as number;
    expect(events.map((event) => JSON.parse(event.fields[dataColumn] as string))).toEqual(
      json.body.events.map((event: Json) => event.data),
    );
  });
});
