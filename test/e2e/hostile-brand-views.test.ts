// The brand's views of its scans and reports under attack (a review of the scans API as the
// counterfeiter sees it), over real HTTP on loopback, embedded form. The attacker wants the brand
// NOT to see its real problem: one genuine code cloned onto fakes (scanned by shoppers on the
// public page from many networks: SUSPICIOUS, KNOWN_COUNTERFEIT_PATTERN) and fakes with forged
// links (COUNTERFEIT). It is a counterfeiter with a script (keyless: the public resolver page and
// its report form, at the per-address limits) or a rival brand with its own enterprise API key,
// which verifies and reports the brand's links as much as it likes. The brand looks through
// `GET /scans` (and its filters: verdict, flag, gtin + serial, scannedBy), the CSV export,
// `/scans/aggregates`, `/scans/top-codes`, `/scans/countries`, `GET /codes/{id}` and the reports
// queue. For each flood the question is not whether it shows (it happened) but whether the brand
// can still find its clone and its real counterfeit activity, with what docs/API.md documents.
//
// Found by this review (2026-12-06) and fixed: `GET /scans/top-codes` ranked by SUSPICIOUS +
// COUNTERFEIT together over at most 100 codes and took no filter, so 100 made-up serials of the
// brand's GTIN, each forged a few times more than the clone was flagged (500 verifications by a
// rival's key), pushed the brand's cloned genuine code out of the view meant to name it; it now
// takes `verdict=SUSPICIOUS|COUNTERFEIT` (services/verify-service/src/handlers/scans.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callFrom, fetchFrom, newClientAddress } from '../support/client-address.ts';
import { startTestProduct, type TestProduct } from '../support/embedded.ts';
import { waitFor } from '../support/wait.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let t: TestProduct;

/** A GTIN of this file's own (0950612…), with its GS1 mod-10 check digit. */
let lastGtin = 0;
function newGtin(): string {
  lastGtin += 1;
  const digits = `0950612${String(lastGtin).padStart(6, '0')}`;
  let sum = 0;
  for (let i = 0; i < 13; i++) sum += Number(digits[12 - i]) * (i % 2 === 0 ? 3 : 1);
  return `${digits}${(10 - (sum % 10)) % 10}`;
}

const api = (method: string, path: string, options: { key?: string; body?: unknown; from?: string } = {}) => {
  const { from = '127.0.0.1', ...rest } = options;
  return callFrom<Json>(from, t.url, method, `/api/v1${path}`, rest);
};

function ok(response: { status: number; body: Json }, status = 200): Json {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  return response.body;
}

async function tenant(name: string, gtin?: string): Promise<{ key: string; id: string }> {
  const operator = t.product.generatedOperatorKey as string;
  const created = ok(await api('POST', '/accounts', { key: operator, body: { name, tier: 'enterprise' } }), 201);
  if (gtin) ok(await api('POST', `/accounts/${created.account.id}/gtins`, { key: operator, body: { gtin } }), 201);
  return { key: created.apiKey.secret as string, id: created.account.id as string };
}

const generate = async (key: string, gtin: string, serialNumber: string) =>
  ok(await api('POST', '/code/generate', { key, body: { gtin, serialNumber, batchNumber: 'LOT-1' } }), 201) as {
    url: string;
    assetId: string;
  };

const verify = async (key: string, url: string, location?: Json) =>
  ok(await api('POST', '/code/verify', { key, body: { url, ...(location ? { location } : {}) } }));

const pathOf = (url: string) => url.slice(new URL(url).origin.length);
/** A genuine link with another serial: its signature no longer verifies (a fake's forged label). */
const withSerial = (url: string, serial: string) => url.replace(/\/21\/[^/?]+/, `/21/${serial}`);

/** What a phone sends opening a scanned link: a top-level navigation the user started (JSON asked). */
const phone = {
  accept: 'application/json',
  'sec-fetch-dest': 'document',
  'sec-fetch-mode': 'navigate',
  'sec-fetch-site': 'none',
  'sec-fetch-user': '?1',
};

/** A shopper's phone opening the verification page of a link, from its own network. */
async function shopperScan(link: string, from = newClientAddress()) {
  const response = await fetchFrom(from, `${t.url}/verify${pathOf(link)}`, { headers: phone });
  const json = (response.headers.get('content-type') ?? '').includes('json');
  return { status: response.status, text: response.text, body: (json && response.text ? JSON.parse(response.text) : {}) as Json };
}

/** The resolver page's report form, as the page itself posts it. */
const publicReport = (link: string, reason: string, from = newClientAddress()) =>
  fetchFrom(from, `${t.url}/resolver/report`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: t.url,
      'sec-fetch-site': 'same-origin',
      'sec-fetch-mode': 'navigate',
      'sec-fetch-dest': 'document',
    },
    body: new URLSearchParams({ link, reason }).toString(),
  });

/** Runs `work` for each item, `width` at a time. */
async function inParallel<T, R>(items: readonly T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index] as T);
      }
    }),
  );
  return results;
}

/** Every scan `GET /scans?<query>` lists, following cursors (at most `maxPages` pages of 1000). */
async function allScans(key: string, query: string, maxPages = 20): Promise<Json[]> {
  const scans: Json[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < maxPages; page++) {
    const body = ok(
      await api('GET', `/scans?${query}&limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { key }),
    );
    scans.push(...(body.scans as Json[]));
    cursor = body.pagination.nextCursor;
    if (!cursor) break;
  }
  return scans;
}

/** Waits until the brand's list holds `count` scans (the scan-history projection's lag). */
const scansStored = (key: string, count: number) =>
  waitFor(
    `${count} scans in the brand's list`,
    async () => ((await allScans(key, 'from=2000-01-01T00:00:00Z')).length >= count ? true : undefined),
    { timeoutMs: 30_000, intervalMs: 250 },
  );

beforeAll(async () => {
  // The default per-address limit on public routes (10 a second): the counterfeiter's script meets it.
  t = await startTestProduct();
});

afterAll(async () => {
  await t?.stop();
});

describe('a cloned genuine code and real fakes, under a rival’s flood of forged made-up serials', () => {
  let brand: { key: string; id: string };
  let rival: { key: string; id: string };
  let gtin: string;
  let clone: { url: string; assetId: string };
  const fakeSerial = 'FAKE-0001';
  const floodSerials = Array.from({ length: 100 }, (_, i) => `ZZ${String(i).padStart(4, '0')}`);
  const floodPerSerial = 5;
  let expectedScans = 0;

  beforeAll(async () => {
    gtin = newGtin();
    brand = await tenant('Brand with a cloned code', gtin);
    rival = await tenant('Rival brand', newGtin());
    clone = await generate(brand.key, gtin, 'CLONE-0001');
    await generate(brand.key, gtin, 'OTHER-0001');

    // The brand's own inspector scans the code once, in France.
    expect((await verify(brand.key, clone.url, { latitude: 48.85, longitude: 2.35, country: 'FR' })).verdict).toBe('AUTHENTIC');
    // The clone in the field: shoppers on 12 networks open its page; with the inspector's network, the 10th
    // client (the 9th shopper) on makes it a cloned label.
    const verdicts: string[] = [];
    for (let i = 0; i < 12; i++) verdicts.push((await shopperScan(clone.url)).body.verdict);
    expect(verdicts.filter((verdict) => verdict === 'SUSPICIOUS').length, verdicts.join()).toBe(4);
    // Fakes with a forged label (a serial of the counterfeiter's own, the clone's signature): shoppers on 3 networks.
    for (let i = 0; i < 3; i++) expect((await shopperScan(withSerial(clone.url, fakeSerial))).body.verdict).toBe('COUNTERFEIT');
    expectedScans = 1 + 12 + 3;
    await scansStored(brand.key, expectedScans);

    // The attack: the rival's key verifies forged links of 100 made-up serials of the brand's GTIN,
    // each a few times (500 requests): more COUNTERFEIT scans per serial than the clone has flagged ones.
    const forged = floodSerials.flatMap((serial) => Array.from({ length: floodPerSerial }, () => withSerial(clone.url, serial)));
    const answers = await inParallel(forged, 16, async (url) => (await verify(rival.key, url)).verdict as string);
    expect(new Set(answers)).toEqual(new Set(['COUNTERFEIT']));
    expectedScans += forged.length;
    await scansStored(brand.key, expectedScans);
  }, 120_000);

  it('top-codes ranked by SUSPICIOUS scans names the cloned genuine code, whatever the made-up serials', async () => {
    // Before 2026-12-06 the route ranked by SUSPICIOUS + COUNTERFEIT only: the 100 made-up serials
    // (5 COUNTERFEIT each) outranked the clone (4 SUSPICIOUS), which fell out of every answer.
    const top = ok(await api('GET', '/scans/top-codes?limit=100', { key: brand.key }));
    const listed = (top.codes as Json[]).map((code) => code.serial);
    // The flood itself is there in the default ranking (it happened).
    expect(listed.filter((serial) => serial.startsWith('ZZ')).length).toBeGreaterThan(0);
    const bySuspicious = await api('GET', '/scans/top-codes?limit=100&verdict=SUSPICIOUS', { key: brand.key });
    expect(bySuspicious.status, JSON.stringify(bySuspicious.body).slice(0, 300)).toBe(200);
    // Only codes with SUSPICIOUS scans: the clone, and none of the forged serials.
    expect(bySuspicious.body.codes).toEqual([
      expect.objectContaining({ gtin, serial: 'CLONE-0001', suspicious: 4, counterfeit: 0 }),
    ]);
    // Ranked by COUNTERFEIT alone, the made-up serials and the real fakes, and not the clone.
    const byCounterfeit = ok(await api('GET', '/scans/top-codes?limit=100&verdict=COUNTERFEIT', { key: brand.key }));
    const counterfeitSerials = (byCounterfeit.codes as Json[]).map((code) => code.serial);
    expect(counterfeitSerials).not.toContain('CLONE-0001');
    expect((byCounterfeit.codes as Json[]).every((code) => code.counterfeit > 0)).toBe(true);
    // Anything else is refused, as every query of the API.
    expect((await api('GET', '/scans/top-codes?verdict=AUTHENTIC', { key: brand.key })).status).toBe(400);
  });

  it('the list’s filters find the clone and the real fakes past the flood (verdict, flag, gtin + serial, scannedBy)', async () => {
    // The newest page is the flood's: a brand reading it unfiltered sees only the rival.
    const newest = ok(await api('GET', '/scans?limit=50', { key: brand.key })).scans as Json[];
    expect(newest.every((scan) => scan.scannedBy === 'other' && scan.verdict === 'COUNTERFEIT')).toBe(true);

    // The console's overview: the ten most recent SUSPICIOUS scans are the clone's, from shoppers.
    const suspicious = ok(await api('GET', '/scans?verdict=SUSPICIOUS&limit=10', { key: brand.key })).scans as Json[];
    expect(suspicious.map((scan) => [scan.serial, scan.scannedBy, scan.riskIndicators])).toEqual(
      Array.from({ length: 4 }, () => ['CLONE-0001', 'public', ['KNOWN_COUNTERFEIT_PATTERN']]),
    );
    const flagged = await allScans(brand.key, 'flag=KNOWN_COUNTERFEIT_PATTERN');
    expect(flagged.map((scan) => scan.serial)).toEqual(Array(4).fill('CLONE-0001'));
    const flaggedSuspicious = await allScans(brand.key, 'flag=KNOWN_COUNTERFEIT_PATTERN&verdict=SUSPICIOUS&gtin=' + gtin);
    expect(flaggedSuspicious).toHaveLength(4);

    // The code's own history: 13 scans of the clone, every one found by gtin + serial.
    const history = await allScans(brand.key, `gtin=${gtin}&serial=CLONE-0001`);
    expect(history).toHaveLength(13);
    const detail = ok(await api('GET', `/codes/${clone.assetId}`, { key: brand.key }));
    expect(detail.scans).toMatchObject({ count: 13, flags: ['KNOWN_COUNTERFEIT_PATTERN'] });

    // Real counterfeit activity: shoppers' COUNTERFEIT scans, none of the rival's 500 among them.
    const publicFakes = await allScans(brand.key, 'verdict=COUNTERFEIT&scannedBy=public');
    expect(publicFakes.map((scan) => scan.serial)).toEqual([fakeSerial, fakeSerial, fakeSerial]);
    // The flood is the rival's, and says so.
    const byOthers = await allScans(brand.key, 'verdict=COUNTERFEIT&scannedBy=other');
    expect(byOthers).toHaveLength(floodSerials.length * floodPerSerial);
    expect(new Set(byOthers.map((scan) => scan.serial.slice(0, 2)))).toEqual(new Set(['ZZ']));

    // The CSV export of the SUSPICIOUS scans: the clone's four rows, shoppers'.
    const csv = await fetchFrom('127.0.0.1', `${t.url}/api/v1/scans?verdict=SUSPICIOUS&format=csv`, {
      headers: { 'x-api-key': brand.key },
    });
    expect(csv.status).toBe(200);
    const rows = csv.text.trim().split('\r\n').slice(1);
    expect(rows).toHaveLength(4);
    for (const row of rows) {
      expect(row).toContain(`,${gtin},CLONE-0001,`);
      expect(row.endsWith(',public')).toBe(true);
    }
  });

  it('the overview’s verdict counts keep the clone’s SUSPICIOUS scans apart from the flood', async () => {
    const aggregates = ok(await api('GET', '/scans/aggregates?groupBy=verdict&bucket=day', { key: brand.key }));
    const total: Record<string, number> = {};
    for (const bucket of aggregates.buckets as Json[]) {
      for (const [verdict, count] of Object.entries(bucket.counts as Record<string, number>))
        total[verdict] = (total[verdict] ?? 0) + count;
    }
    expect(total).toEqual({ AUTHENTIC: 9, SUSPICIOUS: 4, COUNTERFEIT: 3 + floodSerials.length * floodPerSerial });
  });
});

describe('a counterfeiter’s script on the public page, at the per-address limit', () => {
  it('is refused past 10 requests a second from one address, and its forged scans never read as the clone’s', async () => {
    const gtin = newGtin();
    const brand = await tenant('Brand scanned by a script', gtin);
    const clone = await generate(brand.key, gtin, 'CLONE-P1');
    for (let i = 0; i < 10; i++) await shopperScan(clone.url);
    await scansStored(brand.key, 10);
    // One address, as fast as it can: forged labels of made-up serials.
    const script = newClientAddress();
    const statuses = await inParallel(
      Array.from({ length: 30 }, (_, i) => withSerial(clone.url, `SCRIPT-${i}`)),
      30,
      async (url) => (await shopperScan(url, script)).status,
    );
    const served = statuses.filter((status) => status === 200).length;
    expect(statuses.filter((status) => status === 429).length, statuses.join()).toBeGreaterThan(0);
    expect(served).toBeLessThanOrEqual(20);
    await scansStored(brand.key, 10 + served);
    // The clone's flagged scan is still the one SUSPICIOUS scan; the script's are COUNTERFEIT, of no issued code.
    const suspicious = await allScans(brand.key, 'verdict=SUSPICIOUS');
    expect(suspicious.map((scan) => scan.serial)).toEqual(['CLONE-P1']);
    const scripted = await allScans(brand.key, 'verdict=COUNTERFEIT&scannedBy=public');
    expect(scripted).toHaveLength(served);
    expect(scripted.every((scan) => scan.serial.startsWith('SCRIPT-') && scan.riskIndicators.length === 0)).toBe(true);
  }, 60_000);
});

describe('a rival’s made-up locations on the brand’s map, aggregates and export', () => {
  it('leaves the map (countries, aggregates by country) to the brand’s own scans, and marks the rival’s scans as another account’s', async () => {
    const gtin = newGtin();
    const brand = await tenant('Brand with a map', gtin);
    const rival = await tenant('Rival with made-up places', newGtin());
    const bought = await generate(brand.key, gtin, 'BOUGHT-1');
    const own = await generate(brand.key, gtin, 'OWN-1');
    await verify(brand.key, own.url, { latitude: 48.85, longitude: 2.35, country: 'FR' });
    // The rival verifies a genuine code it bought, and forged labels, claiming North Korea and Iran.
    for (let i = 0; i < 5; i++) await verify(rival.key, bought.url, { latitude: 39.03, longitude: 125.75, country: 'KP' });
    for (let i = 0; i < 5; i++)
      await verify(rival.key, withSerial(bought.url, `MAP-${i}`), { latitude: 35.69, longitude: 51.39, country: 'IR' });
    await scansStored(brand.key, 11);

    const countries = ok(await api('GET', '/scans/countries', { key: brand.key }));
    expect(countries.countries).toEqual([{ country: 'FR', scans: 1 }]);
    for (const bucket of ['hour', 'day']) {
      const byCountry = ok(await api('GET', `/scans/aggregates?groupBy=country&bucket=${bucket}`, { key: brand.key }));
      const seen = (byCountry.buckets as Json[]).flatMap((b) => Object.keys(b.counts));
      expect(new Set(seen), bucket).toEqual(new Set(['FR']));
    }
    // The rival's scans keep their claimed country in the list, as another account's, and the filters separate them.
    const kp = await allScans(brand.key, 'country=KP');
    expect(kp).toHaveLength(5);
    expect(kp.every((scan) => scan.scannedBy === 'other')).toBe(true);
    expect(await allScans(brand.key, 'scannedBy=owner')).toHaveLength(1);
    expect(await allScans(brand.key, 'scannedBy=other')).toHaveLength(10);
    // The export says who asked on every row; the brand's own row is the only one that says owner.
    const csv = await fetchFrom('127.0.0.1', `${t.url}/api/v1/scans?format=csv`, { headers: { 'x-api-key': brand.key } });
    const [header, ...rows] = csv.text.trim().split('\r\n');
    expect(header?.endsWith(',scannedBy')).toBe(true);
    expect(rows).toHaveLength(11);
    expect(rows.filter((row) => row.endsWith(',owner'))).toHaveLength(1);
    expect(rows.filter((row) => /,(KP|IR),/.test(row)).every((row) => row.endsWith(',other'))).toBe(true);
    // The rival's made-up journey Pyongyang → Tehran is not the brand's code's: its own next scan in Paris is AUTHENTIC.
    expect((await verify(brand.key, bought.url, { latitude: 48.85, longitude: 2.35, country: 'FR' })).verdict).toBe('AUTHENTIC');
  }, 60_000);
});

describe('scans that claim their own time', () => {
  it('are refused: a scan’s time is the server’s, never the caller’s word', async () => {
    const gtin = newGtin();
    const brand = await tenant('Brand with a timeline', gtin);
    const rival = await tenant('Rival with a time machine', newGtin());
    const code = await generate(brand.key, gtin, 'TIME-1');
    const before = Date.now();
    for (const extra of [
      { scannedAt: '2020-01-01T00:00:00Z' },
      { timestamp: '2999-01-01T00:00:00Z' },
      { location: { latitude: 1, longitude: 1, scannedAt: '2020-01-01T00:00:00Z' } },
    ]) {
      const answer = await api('POST', '/code/verify', { key: rival.key, body: { url: code.url, ...extra } });
      expect(answer.status, JSON.stringify(extra)).toBe(400);
      expect(answer.body.error?.code).toBe('VALIDATION_ERROR');
    }
    await verify(rival.key, withSerial(code.url, 'TIME-X'));
    await scansStored(brand.key, 1);
    const scans = await allScans(brand.key, 'from=0001-01-01T00:00:00Z');
    expect(scans).toHaveLength(1);
    const at = Date.parse(scans[0]?.scannedAt);
    expect(at).toBeGreaterThanOrEqual(before - 1000);
    expect(at).toBeLessThanOrEqual(Date.now() + 1000);
  });
});

describe('the reports queue under a flood', () => {
  let brand: { key: string; id: string };
  let rival: { key: string; id: string };
  let gtin: string;
  let clone: { url: string; assetId: string };
  let decoy: { url: string; assetId: string };
  const spam = 'BLOCKED BY THE BRAND: counterfeit, do not buy';

  beforeAll(async () => {
    gtin = newGtin();
    brand = await tenant('Brand with a queue', gtin);
    rival = await tenant('Rival filing reports', newGtin());
    clone = await generate(brand.key, gtin, 'CLONE-R1');
    decoy = await generate(brand.key, gtin, 'DECOY-R1');
    // A shopper who bought a fake with the cloned label reports it from the page.
    const shopper = await publicReport(clone.url, 'bought at a market stall, the label looks copied');
    expect(shopper.text).toContain('Thank you for your report');
  });

  it('keeps the shopper’s report of the clone findable under 100 reports a rival files, and refuses the 101st, across its keys', async () => {
    const filed = await inParallel(
      Array.from({ length: 100 }, (_, i) => i),
      10,
      async (i) =>
        (await api('POST', '/code/report', { key: rival.key, body: { url: decoy.url, reason: `${spam} #${i}` } })).status,
    );
    expect(filed.filter((status) => status === 201)).toHaveLength(100);
    const more = ok(
      await api('POST', '/keys', { key: rival.key, body: { name: 'another', scopes: ['assets:verify'], environment: 'live' } }),
      201,
    ).secret as string;
    const refused = await api('POST', '/code/report', { key: more, body: { url: decoy.url, reason: spam } });
    expect(refused.status, JSON.stringify(refused.body)).toBe(429);
    // The console's overview shows the ten newest pending: the rival's. Paging the queue finds the shopper's.
    const found: Json[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const body = ok(
        await api('GET', `/code/reports?status=pending&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, {
          key: brand.key,
        }),
      );
      found.push(...(body.reports as Json[]));
      cursor = body.pagination?.nextCursor ?? null;
      pages += 1;
    } while (cursor && pages < 5);
    expect(found).toHaveLength(101);
    const shopper = found.filter((report) => report.serial === 'CLONE-R1');
    expect(shopper.map((report) => [report.source, report.reason])).toEqual([
      ['resolver', 'bought at a market stall, the label looks copied'],
    ]);
    // The code's page and the scans' `reported` mark say so too.
    expect(ok(await api('GET', `/codes/${clone.assetId}`, { key: brand.key }))).toMatchObject({
      reported: true,
      reportStatus: 'pending',
    });
  }, 60_000);

  it('shows the code as reported and pending while the shopper’s report waits, though a rival’s later report of it was dismissed', async () => {
    // Another rival's (the first has spent its hour's reports above).
    const another = await tenant('Another rival', newGtin());
    const bogus = ok(
      await api('POST', '/code/report', { key: another.key, body: { url: clone.url, reason: 'nothing wrong, just noise' } }),
      201,
    );
    const dismissed = await api('POST', `/code/reports/${bogus.reportId}/dismiss`, {
      key: brand.key,
      body: { reason: 'a rival’s noise' },
    });
    expect(dismissed.status, JSON.stringify(dismissed.body)).toBe(200);
    // Before 2026-12-06 the latest report's status was shown: `dismissed`, the shopper's hidden.
    expect(ok(await api('GET', `/codes/${clone.assetId}`, { key: brand.key }))).toMatchObject({
      reported: true,
      reportStatus: 'pending',
    });
  }, 60_000);

  it('a flood of reports makes no genuine code look blocked, to shoppers, verifiers or the brand', async () => {
    const detail = ok(await api('GET', `/codes/${decoy.assetId}`, { key: brand.key }));
    expect(detail).toMatchObject({ reported: true, reportStatus: 'pending', blocked: null });
    const answer = await verify(brand.key, decoy.url);
    expect([answer.verdict, answer.riskIndicators, answer.confirmedReport, answer.blocked]).toEqual([
      'AUTHENTIC',
      [],
      undefined,
      undefined,
    ]);
    const page = await fetchFrom(newClientAddress(), `${t.url}/verify${pathOf(decoy.url)}`, {
      headers: { ...phone, accept: 'text/html' },
    });
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('BLOCKED BY THE BRAND');
    const json = await shopperScan(decoy.url);
    expect([json.body.verdict, json.body.riskIndicators]).toEqual(['AUTHENTIC', []]);
    // The script's own address is limited on the page's form too: 10 an hour, then 429.
    const script = newClientAddress();
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await publicReport(decoy.url, `${spam} page ${i}`, script)).status);
    expect(statuses.slice(0, 10).every((status) => status === 200)).toBe(true);
    expect(statuses[10]).toBe(429);
    // Scans of reported codes (a report of any status, as documented): the decoy's, which the rival's
    // reports mark, and nothing else (the clone, reported by the shopper, was not scanned here).
    await scansStored(brand.key, 2);
    const reportedScans = await allScans(brand.key, 'reported=true');
    expect(reportedScans.every((scan) => scan.serial === 'DECOY-R1')).toBe(true);
  }, 60_000);
});
