import type { ListScansQuery, Principal } from '@hallmark/contracts';
import { connectTestDatabase, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateVerifyService } from '../migrations.ts';
import { listScans, scansExaminedPerPage, travelLookback } from './scans.ts';

const owner: Principal = { accountId: 'acc_walk', environment: 'live' } as Principal;
const total = scansExaminedPerPage + 10_000;
/** Rows (by age, 1 = newest) that are COUNTERFEIT with EXCESSIVE_SCANS; every scan is from JP. */
const matches = [scansExaminedPerPage + 500, scansExaminedPerPage + 9_000];
let database: { db: SqlDatabase; drop(): Promise<void> };

beforeAll(async () => {
  database = await connectTestDatabase('scans_walk');
  await migrateVerifyService(database.db);
  await database.db.query(
    `INSERT INTO scans (scan_id, environment, gtin, serial, verdict, risk_indicators, scan_number, scanned_at, verified_by,
                        account_id, batch, country)
     SELECT gen_random_uuid(), 'live', '09506000134352', 'S' || (i % 100),
            CASE WHEN i = ANY($2::int[]) THEN 'COUNTERFEIT' ELSE 'AUTHENTIC' END,
            CASE WHEN i = ANY($2::int[]) THEN ARRAY['EXCESSIVE_SCANS'] ELSE ARRAY[]::text[] END,
            1, now() - make_interval(secs => i), 'acc_verifier', $1, 'L1', 'JP'
       FROM generate_series(1, $3::int) AS i`,
    [owner.accountId, matches, total],
  );
  await database.db.query('ANALYZE scans');
}, 60_000);
afterAll(async () => {
  await database?.drop();
});

async function everyPage(query: ListScansQuery) {
  const pages: Array<Awaited<ReturnType<typeof listScans>>> = [];
  let cursor: string | undefined;
  do {
    const page = await listScans(database.db, owner, { ...query, ...(cursor ? { cursor } : {}) });
    pages.push(page);
    cursor = page.pagination.nextCursor ?? undefined;
  } while (cursor && pages.length < 20);
  return pages;
}

describe('GET /scans with filters combined', () => {
  it('stops a page after scansExaminedPerPage scans along one index, and paging on finds every match once', async () => {
    const pages = await everyPage({ country: 'JP', verdict: 'COUNTERFEIT', flag: 'EXCESSIVE_SCANS', limit: 50 });
    // The first page looked at the newest 20,000 JP scans, none of which match: empty, with a cursor.
    expect(pages[0]?.scans).toEqual([]);
    expect(pages[0]?.pagination).toMatchObject({ hasMore: true });
    expect(pages[0]?.pagination.nextCursor).toEqual(expect.any(String));
    const found = pages.flatMap((page) => page.scans);
    expect(found).toHaveLength(2);
    expect(found.every((scan) => scan.verdict === 'COUNTERFEIT' && scan.country === 'JP')).toBe(true);
    expect(Date.parse(found[0]?.scannedAt as string)).toBeGreaterThan(Date.parse(found[1]?.scannedAt as string));
    expect(pages.at(-1)?.pagination).toEqual({ limit: 50, hasMore: false, nextCursor: null });
  });

  it('bounds filters with no index in page order too (a GTIN beside reported): along the account’s own scans', async () => {
    const pages = await everyPage({ gtin: '09506000134352', reported: true, limit: 50 });
    expect(pages[0]?.scans).toEqual([]);
    expect(pages[0]?.pagination.hasMore).toBe(true);
    expect(pages).toHaveLength(2);
    expect(pages.at(-1)?.pagination).toEqual({ limit: 50, hasMore: false, nextCursor: null });
  });

  it('bounds scannedBy alone too (it has no index of its own): every scan here is another account’s', async () => {
    const pages = await everyPage({ scannedBy: 'owner', limit: 50 });
    expect(pages[0]?.scans).toEqual([]);
    expect(pages[0]?.pagination.hasMore).toBe(true);
    expect(pages).toHaveLength(2);
    expect(pages.at(-1)?.pagination).toEqual({ limit: 50, hasMore: false, nextCursor: null });
    const others = await listScans(database.db, owner, { scannedBy: 'other', limit: 50 });
    expect(others.scans.map((scan) => scan.scannedBy)).toEqual(Array(50).fill('other'));
  });

  it('bounds reported alone too (it has no index in page order): no code here has a report', async () => {
    const pages = await everyPage({ reported: true, limit: 50 });
    expect(pages[0]?.scans).toEqual([]);
    expect(pages[0]?.pagination.hasMore).toBe(true);
    expect(pages).toHaveLength(2);
    expect(pages.at(-1)?.pagination).toEqual({ limit: 50, hasMore: false, nextCursor: null });
    const unreported = await listScans(database.db, owner, { reported: false, limit: 50 });
    expect(unreported.scans).toHaveLength(50);
    expect(unreported.pagination.hasMore).toBe(true);
  });

  it('leaves a single filter as it was: the matches on the first page, however deep', async () => {
    const [page] = await everyPage({ verdict: 'COUNTERFEIT', limit: 50 });
    expect(page?.scans).toHaveLength(2);
    expect(page?.pagination).toEqual({ limit: 50, hasMore: false, nextCursor: null });
  });

  it('pages a frequent combination as usual: full pages in order, none skipped or repeated', async () => {
    const ids: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 3; page += 1) {
      const answer = await listScans(database.db, owner, {
        country: 'JP',
        verdict: 'AUTHENTIC',
        limit: 200,
        ...(cursor ? { cursor } : {}),
      });
      expect(answer.scans).toHaveLength(200);
      ids.push(...answer.scans.map((scan) => scan.scanId));
      cursor = answer.pagination.nextCursor ?? undefined;
    }
    const expected = await database.db.query<{ scan_id: string }>(
      `SELECT scan_id FROM scans WHERE verdict = 'AUTHENTIC' ORDER BY scanned_at DESC, scan_id DESC LIMIT 600`,
    );
    expect(ids).toEqual(expected.map((row) => row.scan_id));
  });
});

describe('travelKm beside a flood of the code by another verifier', () => {
  // The brand's own located scans of one code, in Paris, then (an hour later) in Lyon; between them a
  // rival's scans of the same code from Sydney. The journey is measured from the brand's own previous
  // located scan, and finding it reads at most travelLookback of the code's scans.
  const brand: Principal = { accountId: 'acc_travel', environment: 'live' } as Principal;
  const scan = (serial: string, verifiedBy: string, at: string, where: [number, number] | null) =>
    database.db.query(
      `INSERT INTO scans (scan_id, environment, gtin, serial, verdict, risk_indicators, scan_number, scanned_at, verified_by,
                          account_id, latitude, longitude)
       VALUES (gen_random_uuid(), 'live', '09506000134369', $1, 'AUTHENTIC', '{}', 1, $2::timestamptz, $3, $4, $5, $6)`,
      [serial, at, verifiedBy, brand.accountId, where?.[0] ?? null, where?.[1] ?? null],
    );
  const flood = (serial: string, count: number) =>
    database.db.query(
      `INSERT INTO scans (scan_id, environment, gtin, serial, verdict, risk_indicators, scan_number, scanned_at, verified_by,
                          account_id, latitude, longitude)
       SELECT gen_random_uuid(), 'live', '09506000134369', $1, 'AUTHENTIC', '{}', 1,
              '2026-12-01T10:00:00Z'::timestamptz + make_interval(secs => i), 'acc_rival', $2, -33.87, 151.21
         FROM generate_series(1, $3::int) AS i`,
      [serial, brand.accountId, count],
    );
  const paris: [number, number] = [48.857, 2.352];
  const lyon: [number, number] = [45.764, 4.836];

  /** The page's statement run again under EXPLAIN ANALYZE: how many scans its lateral look-ups read in all. */
  const scansReadByLookups = async (query: ListScansQuery) => {
    const statements: Array<{ text: string; params: readonly unknown[] }> = [];
    const recording = {
      ...database.db,
      query: (text: string, params: readonly unknown[] = []) => {
        statements.push({ text, params });
        return database.db.query(text, params);
      },
    } as SqlDatabase;
    const page = await listScans(recording, brand, query);
    const listing = statements.find((statement) => statement.text.includes('LEFT JOIN LATERAL')) as (typeof statements)[number];
    type PlanNode = {
      'Node Type': string;
      'Actual Rows': number;
      'Actual Loops': number;
      'Relation Name'?: string;
      Plans?: PlanNode[];
    };
    const [row] = await database.db.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${listing.text}`,
      listing.params,
    );
    // The look-ups are the plan's nodes over `scans` run once for each row of the page (loops > 1).
    const nodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodes)];
    const read = nodes(row?.['QUERY PLAN'][0]?.Plan as PlanNode)
      .filter((node) => node['Relation Name'] === 'scans' && node['Actual Loops'] > 1)
      .reduce((sum, node) => sum + node['Actual Rows'] * node['Actual Loops'], 0);
    return { page, read };
  };

  it('measures from the brand’s own previous scan past a rival’s in between, and reads at most travelLookback scans a row', async () => {
    await scan('T1', brand.accountId, '2026-12-01T09:00:00Z', paris);
    await flood('T1', 50);
    await scan('T1', brand.accountId, '2026-12-01T11:00:00Z', lyon);
    const near = await listScans(database.db, brand, { serial: 'T1', scannedBy: 'owner', limit: 50 });
    expect(near.scans.map((listed) => listed.travelKm)).toEqual([391.6, null]);

    // 30,000 of the rival's scans in between: the previous own scan is beyond the look-back, so no
    // journey, and the page's look-ups read about travelLookback scans for each of its rows.
    await scan('T2', brand.accountId, '2026-12-01T09:00:00Z', paris);
    await flood('T2', 30_000);
    await scan('T2', brand.accountId, '2026-12-02T11:00:00Z', lyon);
    await database.db.query('ANALYZE scans');
    const { page, read } = await scansReadByLookups({ serial: 'T2', limit: 5 });
    expect(page.scans.map((listed) => listed.scannedBy)).toEqual(['owner', 'other', 'other', 'other', 'other']);
    expect(page.scans[0]?.travelKm).toBeNull();
    expect(page.scans[1]?.travelKm).toBe(0);
    expect(read).toBeLessThanOrEqual(6 * travelLookback);
  });
});
