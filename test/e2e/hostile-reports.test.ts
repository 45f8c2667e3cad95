// Issue #16, item 3: reports and scans that one tenant (or anyone on the public page) cannot turn
// against another tenant's codes. Every attack here is made over HTTP, as an outsider would, in
// both forms.
import { createPostgresDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { earlyInWindow, fetchFrom, newClientAddress } from '../support/client-address.ts';
import { startDistributedProduct } from '../support/distributed-product.ts';
import { type ApiResponse, call, restartTestProduct, startEmbeddedProduct } from '../support/embedded.ts';
import { waitFor } from '../support/wait.ts';

/** The product of the form under test, as this file needs it. */
interface ReportsForm {
  /** Changes when the embedded product restarts. */
  url: string;
  operatorKey: string;
  /** A query on the product's database (PGlite, or the distributed form's PostgreSQL). */
  query<Row>(text: string, params?: unknown[]): Promise<Row[]>;
  /**
   * The client to load a page as, so the resolver's reload window (HALLMARK_RESOLVER_RELOAD_SECONDS,
   * per client address) shows a new scan: the embedded form moves its clock past the window and
   * keeps the address; the distributed form, whose clock is the machine's, sends from a loopback
   * address of its own.
   */
  pastReloadWindow(): string | undefined;
  /** The client whose public reports no earlier test counted (the per-address limit is per hour): as above. */
  freshHour(): string | undefined;
  /** The product's clock, in ms (the embedded form's moves; the distributed form's is the machine's). */
  now(): number;
  /** Restarts what holds the codes' blocks: the embedded product on its data folder, or verify-service. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

async function startEmbeddedForm(env: Record<string, string>): Promise<ReportsForm> {
  let test = (await startEmbeddedProduct(env)).test;
  const form: ReportsForm = {
    url: test.url,
    operatorKey: test.product.generatedOperatorKey as string,
    query: (text, params) => test.product.db.query(text, params),
    pastReloadWindow: () => {
      test.clock.advance(11_000);
      return undefined;
    },
    freshHour: () => {
      test.clock.advance(3_600_000);
      return undefined;
    },
    now: () => test.clock.now().getTime(),
    async restart() {
      test = await restartTestProduct(test);
      form.url = test.url;
    },
    stop: () => test.stop(),
  };
  return form;
}

async function startDistributedForm(env: Record<string, string>): Promise<ReportsForm> {
  const product = await startDistributedProduct(env);
  const db = createPostgresDatabase({ connectionString: product.databaseUrl, maxConnections: 2 });
  return {
    url: product.url,
    operatorKey: product.operatorKey,
    query: (text, params) => db.query(text, params),
    pastReloadWindow: newClientAddress,
    freshHour: newClientAddress,
    now: () => Date.now(),
    async restart() {
      await product.restart('verify-service-1');
      await waitFor(
        'verify-service to answer again',
        async () =>
          (await fetch(`${product.url}/api/v1/system/ping/verify-service`, { method: 'POST' })).status === 200 ? true : undefined,
        { timeoutMs: 60_000 },
      );
    },
    async stop() {
      await db.close();
      await product.stop();
    },
  };
}

/** The form under test (each form's block sets it before its tests run). */
let form: ReportsForm;
let owner: string;
let ownerAccountId: string;
let other: string;

const gtin = '09506000134369';
const reportsPerAccount = 6;
const reportsPerAddress = 3;
const hourMs = 3_600_000;

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;
const api = <T = Json>(method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<T>(form.url, method, `/api/v1${path}`, options);

function expectError(response: ApiResponse, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error?.code).toBe(code);
}

let serialCounter = 0;
async function generate(extra: Record<string, unknown> = {}) {
  serialCounter += 1;
  const response = await api('POST', '/code/generate', {
    key: owner,
    body: {
      gtin,
      serialNumber: `HR-${Date.now().toString(36)}-${serialCounter}`,
      batchNumber: 'LOT1',
      metadata: { name: 'Owner’s perfume' },
      ...extra,
    },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body as { url: string; serial: string; assetId: string; signature: string };
}

const pathOf = (url: string) => url.slice(new URL(url).origin.length);
const forge = (url: string) => url.replace(/sig=(.)/, (_, c: string) => `sig=${c === 'A' ? 'B' : 'A'}`);
const verify = (key: string, url: string, extra: Record<string, unknown> = {}) =>
  api('POST', '/code/verify', { key, body: { url, ...extra } });
/** The resolver's page as JSON, for the client at `from` (127.0.0.1 unless given). */
const pageJson = async (url: string, from = '127.0.0.1') =>
  JSON.parse(
    (await fetchFrom(from, `${form.url}${pathOf(url)}`, { headers: { accept: 'application/json' }, follow: true })).text,
  ) as Json;
const pageHtml = async (url: string, from = '127.0.0.1') =>
  (await fetchFrom(from, `${form.url}${pathOf(url)}`, { follow: true })).text;
const publicReport = (link: string, reason: string, from = '127.0.0.1') =>
  fetchFrom(from, `${form.url}/resolver/report`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ link, reason }).toString(),
  });
const queue = async (key: string, query = '') => {
  const response = await api('GET', `/code/reports${query}`, { key });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body as { reports: Json[]; pagination: { limit: number; nextCursor: string | null; hasMore: boolean } };
};
const assetEvents = async (assetId: string) =>
  (
    await form.query<{ event_type: string; data: Json }>(
      'SELECT event_type, data FROM event_log WHERE stream_id = $1 ORDER BY global_position',
      [`asset-${assetId}`],
    )
  ).map((row) => ({ type: row.event_type, data: row.data }));

const settings = {
  HALLMARK_PUBLIC_RATE_LIMIT: '1000',
  HALLMARK_REPORT_LIMIT_PER_ACCOUNT: String(reportsPerAccount),
  HALLMARK_REPORT_LIMIT_PER_ADDRESS: String(reportsPerAddress),
};

async function account(name: string) {
  const created = await api('POST', '/accounts', { key: form.operatorKey, body: { name, tier: 'enterprise' } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { key: created.body.apiKey.secret as string, accountId: created.body.account.id as string };
}

describe.each([
  ['embedded', startEmbeddedForm],
  ['distributed', startDistributedForm],
])('reports and scans against a hostile tenant (%s form)', (_form, start) => {
  beforeAll(async () => {
    form = await start(settings);
    ({ key: owner, accountId: ownerAccountId } = await account('Owner brand'));
    ({ key: other } = await account('Other tenant'));
    // GTIN ownership (issue #16): the operator grants the owner its GTIN before it signs codes for it.
    await api('POST', `/accounts/${ownerAccountId}/gtins`, { key: form.operatorKey, body: { gtin } });
  });

  afterAll(async () => {
    await form?.stop();
  });

  describe('reports go to the owner’s review queue', () => {
    it('another tenant’s report and a public-page report leave the verdict alone and land in the owner’s queue only', async () => {
      const code = await generate();
      const byTenant = await api('POST', '/code/report', { key: other, body: { url: code.url, reason: 'rival says fake' } });
      expect(byTenant.status, JSON.stringify(byTenant.body)).toBe(201);
      expect(byTenant.body).toMatchObject({
        reportId: expect.stringMatching(/^rep_/),
        gtin,
        serial: code.serial,
        status: 'pending',
      });
      const fromPage = await publicReport(code.url, 'looked odd');
      expect(fromPage.status).toBe(200);
      expect(fromPage.text).toContain('Thank you for your report');

      const verified = await verify(other, code.url);
      expect(verified.body).toMatchObject({ verdict: 'AUTHENTIC', riskIndicators: [] });
      expect(verified.body.confirmedReport).toBeUndefined();
      expect(await pageJson(code.url)).toMatchObject({ verdict: 'AUTHENTIC', riskIndicators: [] });

      const mine = (await queue(owner)).reports.filter((report) => report.serial === code.serial);
      expect(mine).toHaveLength(2);
      expect(mine).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            reportId: byTenant.body.reportId,
            status: 'pending',
            source: 'api',
            reason: 'rival says fake',
            gtin,
            serial: code.serial,
            assetId: code.assetId,
            decidedAt: null,
          }),
          expect.objectContaining({ status: 'pending', source: 'resolver', reason: 'looked odd', assetId: code.assetId }),
        ]),
      );
      expect((await queue(other)).reports.filter((report) => report.serial === code.serial)).toEqual([]);
    });

    it('pages the queue with a cursor and filters it by status', async () => {
      const code = await generate();
      for (const reason of ['one', 'two', 'three']) {
        expect((await api('POST', '/code/report', { key: owner, body: { url: code.url, reason } })).status).toBe(201);
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Awaited<ReturnType<typeof queue>> = await queue(
          owner,
          `?status=pending&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        );
        expect(page.reports.length).toBeLessThanOrEqual(2);
        for (const report of page.reports) {
          expect(report.status).toBe('pending');
          seen.push(report.reportId);
        }
        cursor = page.pagination.nextCursor;
      } while (cursor);
      expect(new Set(seen).size).toBe(seen.length);
      const mine = (await queue(owner, '?limit=100')).reports.filter((report) => report.serial === code.serial);
      expect(mine.map((report) => report.reason)).toEqual(['three', 'two', 'one']);
      expect(mine.every((report) => seen.includes(report.reportId))).toBe(true);
      const first = mine[0] as Json;
      expect((await api('POST', `/code/reports/${first.reportId}/dismiss`, { key: owner })).status).toBe(200);
      expect((await queue(owner, '?status=pending&limit=100')).reports.map((report) => report.reportId)).not.toContain(
        first.reportId,
      );
      expect((await queue(owner, '?status=dismissed&limit=100')).reports.map((report) => report.reportId)).toContain(
        first.reportId,
      );

      expectError(await api('GET', '/code/reports?status=maybe', { key: owner }), 400, 'VALIDATION_ERROR');
      expectError(await api('GET', '/code/reports?cursor=not-a-cursor', { key: owner }), 400, 'VALIDATION_ERROR');
      expectError(await api('GET', '/code/reports?limit=0', { key: owner }), 400, 'VALIDATION_ERROR');
    });

    it('the owner confirms a report: SUSPICIOUS, KNOWN_COUNTERFEIT_PATTERN and the reason, on the API and the page; recorded in the code’s history', async () => {
      const code = await generate();
      const report = (await api('POST', '/code/report', { key: other, body: { url: code.url, reason: 'bought at a market' } }))
        .body;

      // The reporter cannot decide its own report on another account's code: 404, as for an unknown id.
      for (const action of ['confirm', 'dismiss']) {
        const foreign = await api('POST', `/code/reports/${report.reportId}/${action}`, { key: other });
        const unknown = await api('POST', `/code/reports/rep_00000000000000000000/${action}`, { key: other });
        expectError(foreign, 404, 'NOT_FOUND');
        expectError(unknown, 404, 'NOT_FOUND');
        expect(foreign.body.error?.message.replace(report.reportId, 'ID')).toBe(
          unknown.body.error?.message.replace('rep_00000000000000000000', 'ID'),
        );
      }
      expect((await verify(other, code.url)).body.verdict).toBe('AUTHENTIC');

      const confirmed = await api('POST', `/code/reports/${report.reportId}/confirm`, {
        key: owner,
        body: { reason: 'Confirmed counterfeit: seized at a market stall' },
      });
      expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
      expect(confirmed.body).toMatchObject({
        reportId: report.reportId,
        status: 'confirmed',
        decidedAt: expect.any(String),
        blockReason: 'Confirmed counterfeit: seized at a market stall',
      });

      const verified = await verify(other, code.url);
      expect(verified.body).toMatchObject({
        verdict: 'SUSPICIOUS',
        riskIndicators: ['KNOWN_COUNTERFEIT_PATTERN'],
        checks: { signature: { passed: true }, scanPattern: { passed: false, riskLevel: 'critical' } },
        confirmedReport: { reason: 'Confirmed counterfeit: seized at a market stall', confirmedAt: confirmed.body.decidedAt },
      });
      const quick = await api('POST', '/code/verify?view=quickstart', { key: owner, body: { url: code.url } });
      expect(quick.body).toMatchObject({ verdict: 'SUSPICIOUS', confirmedReport: { reason: expect.any(String) } });
      const reloader = form.pastReloadWindow();
      expect(await pageJson(code.url, reloader)).toMatchObject({
        verdict: 'SUSPICIOUS',
        riskIndicators: ['KNOWN_COUNTERFEIT_PATTERN'],
        confirmedReport: { reason: 'Confirmed counterfeit: seized at a market stall' },
      });
      const page = await pageHtml(code.url, reloader);
      expect(page).toContain('Confirmed counterfeit: seized at a market stall');

      expectError(await api('POST', `/code/reports/${report.reportId}/confirm`, { key: owner }), 409, 'CONFLICT');
      expectError(await api('POST', `/code/reports/${report.reportId}/dismiss`, { key: owner }), 409, 'CONFLICT');

      const second = (await api('POST', '/code/report', { key: other, body: { url: code.url } })).body;
      const dismissed = await api('POST', `/code/reports/${second.reportId}/dismiss`, { key: owner });
      expect(dismissed.body).toMatchObject({ status: 'dismissed', decidedAt: expect.any(String) });

      const events = await assetEvents(code.assetId);
      expect(events.map((event) => event.type)).toEqual(['code.generated', 'code.report-confirmed', 'code.report-dismissed']);
      expect(events[1]?.data).toMatchObject({
        reportId: report.reportId,
        reason: 'Confirmed counterfeit: seized at a market stall',
        reportReason: 'bought at a market',
        decidedBy: expect.stringMatching(/^key_/),
      });
    });

    it('the owner lifts the block of a report confirmed in error: AUTHENTIC again on the API and the page; the lift in the code’s history; nobody else can', async () => {
      const code = await generate();
      // A reporter of its own: the other tenant's reports per hour are this file's other tests'.
      const { key: reporter } = await account('Lift reporter');
      const report = (await api('POST', '/code/report', { key: reporter, body: { url: code.url, reason: 'looks odd' } })).body;
      // Only a confirmed report has a block to lift.
      expectError(await api('POST', `/code/reports/${report.reportId}/lift`, { key: owner }), 409, 'CONFLICT');
      const confirmed = await api('POST', `/code/reports/${report.reportId}/confirm`, { key: owner, body: { reason: 'fake' } });
      expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
      expect((await verify(other, code.url)).body.verdict).toBe('SUSPICIOUS');

      // The reporter, another tenant, cannot lift it (404, as an unknown id); the owner's scanner key lacks the scope.
      expectError(await api('POST', `/code/reports/${report.reportId}/lift`, { key: reporter }), 404, 'NOT_FOUND');
      const scanner = (await api('POST', '/keys', { key: owner, body: { name: 'scanner', scopes: ['assets:verify'] } })).body
        .secret as string;
      expectError(await api('POST', `/code/reports/${report.reportId}/lift`, { key: scanner }), 403, 'INSUFFICIENT_SCOPE');
      expectError(
        await api('POST', `/code/reports/${report.reportId}/lift`, { key: owner, body: { reason: '' } }),
        400,
        'VALIDATION_ERROR',
      );
      expect((await verify(other, code.url)).body.verdict).toBe('SUSPICIOUS');

      const lifted = await api('POST', `/code/reports/${report.reportId}/lift`, {
        key: owner,
        body: { reason: 'Confirmed the wrong serial' },
      });
      expect(lifted.status, JSON.stringify(lifted.body)).toBe(200);
      expect(lifted.body).toMatchObject({
        reportId: report.reportId,
        status: 'lifted',
        decidedAt: confirmed.body.decidedAt,
        blockReason: null,
        liftedAt: expect.any(String),
        liftReason: 'Confirmed the wrong serial',
      });
      const verified = await verify(other, code.url);
      expect(verified.body).toMatchObject({ verdict: 'AUTHENTIC' });
      expect(verified.body.confirmedReport).toBeUndefined();
      expect(await pageJson(code.url, form.pastReloadWindow())).toMatchObject({ verdict: 'AUTHENTIC' });
      const listed = await api('GET', '/code/reports?status=lifted', { key: owner });
      expect(listed.body.reports.map((listedReport: Json) => listedReport.reportId)).toContain(report.reportId);

      // Once: a second lift, a confirmation or a dismissal is a conflict.
      for (const action of ['lift', 'confirm', 'dismiss'])
        expectError(await api('POST', `/code/reports/${report.reportId}/${action}`, { key: owner }), 409, 'CONFLICT');
      const events = await assetEvents(code.assetId);
      expect(events.map((event) => event.type)).toEqual(['code.generated', 'code.report-confirmed', 'code.report-lifted']);
      expect(events[2]?.data).toMatchObject({
        reportId: report.reportId,
        reason: 'Confirmed the wrong serial',
        liftedBy: expect.stringMatching(/^key_/),
      });
    });

    it('asks for assets:read to list and assets:create to decide', async () => {
      const code = await generate();
      const report = (await api('POST', '/code/report', { key: other, body: { url: code.url } })).body;
      const scanner = (await api('POST', '/keys', { key: owner, body: { name: 'scanner', scopes: ['assets:verify'] } })).body
        .secret as string;
      expectError(await api('GET', '/code/reports', { key: scanner }), 403, 'INSUFFICIENT_SCOPE');
      expectError(await api('POST', `/code/reports/${report.reportId}/confirm`, { key: scanner }), 403, 'INSUFFICIENT_SCOPE');
      expectError(await api('POST', `/code/reports/${report.reportId}/dismiss`, { key: scanner }), 403, 'INSUFFICIENT_SCOPE');
      expectError(await api('POST', `/code/reports/${report.reportId}/lift`, { key: scanner }), 403, 'INSUFFICIENT_SCOPE');
      expectError(await api('GET', '/code/reports'), 401, 'MISSING_API_KEY');
    });

    it('refuses a report of a link no stored code signed, on the API and the page', async () => {
      const code = await generate();
      const forged = forge(code.url);
      expectError(await api('POST', '/code/report', { key: other, body: { url: forged } }), 404, 'NOT_FOUND');
      expectError(await api('POST', '/code/report', { key: other, body: { url: 'nope' } }), 400, 'INVALID_URL');
      const page = await publicReport(forged, 'fake', form.freshHour()); // a fresh hour for this address's report limit
      expect(page.status).toBe(200);
      expect(page.text).not.toContain('Thank you for your report');
      expect((await queue(owner, '?limit=100')).reports.filter((report) => report.serial === code.serial)).toEqual([]);
    });

    it('limits reports per account on the API and per address on the page (429 with Retry-After)', async () => {
      const code = await generate();
      const client = form.freshHour();
      // An account that has reported nothing yet (the distributed form's hour is the machine's).
      const { key: rival } = await account('Rival reporting too much');
      // Each limit's reports and its refusal in one hour of the product's clock: the limits count per
      // fixed clock hour, so an hour's end in between would count afresh.
      const hour = await earlyInWindow(hourMs, 30_000, 20, form.now);
      // Refused reports record nothing and count for nothing: garbage sent by any of the account's keys
      // (a leaked one among them) does not use up the hour the genuine reports need.
      for (let i = 0; i < 2 * reportsPerAccount; i++) {
        const garbage = await api('POST', '/code/report', { key: rival, body: { url: `not a link ${i}` } });
        expectError(garbage, 400, 'INVALID_URL');
      }
      for (let i = 0; i < reportsPerAccount; i++) {
        const accepted = await api('POST', '/code/report', { key: rival, body: { url: code.url } });
        expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);
      }
      const refused = await api('POST', '/code/report', { key: rival, body: { url: code.url } });
      expectError(refused, 429, 'RATE_LIMITED');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      // The limit is the account's, not the key's: a second key of the same account is refused too.
      const second = (await api('POST', '/keys', { key: rival, body: { name: 'second', scopes: ['assets:verify'] } })).body
        .secret as string;
      expectError(await api('POST', '/code/report', { key: second, body: { url: code.url } }), 429, 'RATE_LIMITED');
      // Another account has its own.
      expect((await api('POST', '/code/report', { key: owner, body: { url: code.url } })).status).toBe(201);

      for (let i = 0; i < reportsPerAddress; i++) expect((await publicReport(code.url, `n${i}`, client)).status).toBe(200);
      const busy = await publicReport(code.url, 'one too many', client);
      expect(busy.status).toBe(429);
      expect(Number(busy.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(busy.text).not.toContain('Thank you for your report');
      const pending = (await queue(owner, '?limit=100')).reports.filter(
        (report) => report.serial === code.serial && report.source === 'resolver',
      );
      expect(pending).toHaveLength(reportsPerAddress);
      expect(Math.floor(form.now() / hourMs), 'all the reports in one hour').toBe(hour);
    });
  });

  describe('another tenant’s keys are not other clients', () => {
    it('ten keys verifying a genuine code once each from one address fake no cloned label', async () => {
      const code = await generate();
      const keys = await Promise.all(
        Array.from({ length: 10 }, async (_, i) => {
          const made = await api('POST', '/keys', { key: other, body: { name: `scanner ${i}`, scopes: ['assets:verify'] } });
          expect(made.status, JSON.stringify(made.body)).toBe(201);
          return made.body.secret as string;
        }),
      );
      for (const key of keys) expect((await verify(key, code.url)).body.verdict).toBe('AUTHENTIC');
      const mine = await verify(owner, code.url);
      expect(mine.body).toMatchObject({ verdict: 'AUTHENTIC', riskIndicators: [] });
    });
  });

  describe('forged scans do not count against the genuine code', () => {
    it('200 forged-signature scans leave the next genuine scan AUTHENTIC with its own count, and are still published as COUNTERFEIT', async () => {
      const config = await api('PATCH', '/compliance/config', {
        key: owner,
        body: { riskThresholds: { maxScansPerWindow: 5, repeatWindowSeconds: 0, clonedLabelClients: 3 } },
      });
      expect(config.status, JSON.stringify(config.body)).toBe(200);
      const code = await generate();
      const first = await verify(owner, code.url);
      expect(first.body).toMatchObject({ verdict: 'AUTHENTIC', metadata: { totalScans: 1 } });

      const forged = forge(code.url);
      const scanners = await Promise.all(
        ['a', 'b', 'c', 'd'].map(
          async (name) =>
            (await api('POST', '/keys', { key: other, body: { name: `forger ${name}`, scopes: ['assets:verify'] } })).body
              .secret as string,
        ),
      );
      for (let round = 0; round < 20; round++) {
        const answers = await Promise.all(
          Array.from({ length: 10 }, (_, i) => verify(scanners[i % scanners.length] as string, forged)),
        );
        for (const answer of answers) expect(answer.body.verdict).toBe('COUNTERFEIT');
      }
      // A forged scan far away does not make the genuine code's next scan an impossible journey.
      await verify(other, forged, { location: { latitude: 48.8566, longitude: 2.3522 } });

      const genuine = await verify(owner, code.url, { location: { latitude: 40.7128, longitude: -74.006 } });
      expect(genuine.body).toMatchObject({
        verdict: 'AUTHENTIC',
        riskIndicators: [],
        metadata: { totalScans: 2 },
        checks: { scanPattern: { passed: true, scanNumber: 2 } },
      });
      expect(await pageJson(code.url, form.pastReloadWindow())).toMatchObject({
        verdict: 'AUTHENTIC',
        metadata: { totalScans: 3 },
      });

      const published = await waitFor('the forged scans in the scan history', async () => {
        const rows = await form.query<{ verdict: string; n: string }>(
          'SELECT verdict, count(*) AS n FROM scans WHERE gtin = $1 AND serial = $2 GROUP BY verdict',
          [gtin, code.serial],
        );
        const counts = Object.fromEntries(rows.map((row) => [row.verdict, Number(row.n)]));
        return counts.COUNTERFEIT === 201 && counts.AUTHENTIC === 3 ? counts : undefined;
      });
      expect(published).toEqual({ COUNTERFEIT: 201, AUTHENTIC: 3 });
    });
  });

  describe('the resolver’s reload cache', () => {
    it('never shows a genuine scan’s answer for the same link with another batch (page, JSON and API agree)', async () => {
      const code = await generate({ batchNumber: 'LOT1' });
      expect(await pageJson(code.url)).toMatchObject({ verdict: 'AUTHENTIC', batch: 'LOT1' });
      const swapped = code.url.replace('/10/LOT1', '/10/LOT2');
      expect(swapped).not.toBe(code.url);
      const json = await pageJson(swapped);
      expect(json).toMatchObject({ verdict: 'COUNTERFEIT', batch: 'LOT2' });
      const page = await pageHtml(swapped);
      expect(page).toContain('Counterfeit: do not use');
      expect(page).not.toContain('Authentic product');
      expect((await verify(other, swapped)).body.verdict).toBe('COUNTERFEIT');
      // The genuine link, reloaded, still shows its own scan.
      expect(await pageJson(code.url)).toMatchObject({ verdict: 'AUTHENTIC', batch: 'LOT1', metadata: { totalScans: 1 } });
    });

    it('never shows a genuine scan’s answer for the same link with another expiry', async () => {
      const code = await generate({ batchNumber: 'LOT9', expiryDate: '2031-06-30' });
      expect(code.url).toContain('17=310630');
      expect(await pageJson(code.url)).toMatchObject({ verdict: 'AUTHENTIC' });
      const later = code.url.replace('17=310630', '17=391231');
      expect(await pageJson(later)).toMatchObject({ verdict: 'COUNTERFEIT' });
    });
  });

  describe('a block is a record, not a cache entry', () => {
    it('outlives a restart (loaded from the confirmed reports)', async () => {
      const code = await generate();
      // A reporter with its hourly limit untouched (other has spent its own above).
      const { key: reporter } = await account('Reporter before a restart');
      const report = await api('POST', '/code/report', { key: reporter, body: { url: code.url } });
      expect(report.status, JSON.stringify(report.body)).toBe(201);
      const confirmed = await api('POST', `/code/reports/${report.body.reportId}/confirm`, {
        key: owner,
        body: { reason: 'Batch stolen from the warehouse' },
      });
      expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
      await form.restart();
      const verified = await verify(reporter, code.url);
      expect(verified.body).toMatchObject({
        verdict: 'SUSPICIOUS',
        riskIndicators: ['KNOWN_COUNTERFEIT_PATTERN'],
        confirmedReport: { reason: 'Batch stolen from the warehouse' },
      });
    });
  });
});
