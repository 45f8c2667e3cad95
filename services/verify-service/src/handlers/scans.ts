import { distanceKm } from '@hallmark/codes';
import {
  decodeInstantCursor,
  encodeCursor,
  HallmarkError,
  type ListScansQuery,
  maxScansPageSize,
  type Principal,
  type RiskIndicator,
  type ScanAggregates,
  type ScanAggregatesQuery,
  type ScanCountries,
  type ScanCountriesQuery,
  type ScanList,
  type ScannedBy,
  type ScanView,
  type TopCodes,
  type TopCodesQuery,
  uuidPattern,
  type Verdict,
} from '@hallmark/contracts';
import { writesRealDateTime } from '@hallmark/gs1';
import type { SqlDatabase } from '@hallmark/sql';
import { publicPageVerifier } from '../scan-history.ts';

// The scans API (issue #21; docs/API.md, "Scans"). A scan belongs to the account whose code (or
// GTIN) was scanned, in the environment of the key that verified it. The list reads `scans` by
// the index scans_by_account (keyset on scanned_at, scan_id); the aggregates read the rollups the
// scan-history projection keeps (scan_counts_hourly, scan_code_days), never the raw rows.

const hourMs = 3_600_000;
const dayMs = 24 * hourMs;

interface ScanRow {
  scan_id: string;
  scanned_at: Date | string;
  at_text: string;
  gtin: string;
  serial: string;
  batch: string | null;
  verdict: Verdict;
  risk_indicators: RiskIndicator[] | string;
  scan_number: number;
  latitude: number | null;
  longitude: number | null;
  country: string | null;
  reported: boolean;
  /** The verifying account, or `resolver` for the public page (verify-code.ts, publicPageVerifier). */
  verified_by: string;
  account_id: string;
  /** The code's previous located scan (of the same kind: genuine or forged), for the journey's speed. */
  previous_latitude: number | null;
  previous_longitude: number | null;
  previous_at: Date | string | null;
}

/**
 * The journey from the code's previous located scan to this one, as GEOGRAPHIC_IMPOSSIBILITY judges
 * it (packages/codes, risk.ts): kilometres, and km/h (null when no time passed between the two).
 */
function travelOf(row: ScanRow): Pick<ScanView, 'travelKm' | 'travelKmh'> {
  if (row.latitude === null || row.longitude === null || row.previous_latitude === null || row.previous_longitude === null) {
    return { travelKm: null, travelKmh: null };
  }
  const km = distanceKm(
    { latitude: row.previous_latitude, longitude: row.previous_longitude },
    { latitude: row.latitude, longitude: row.longitude },
  );
  const hours = (new Date(row.scanned_at).getTime() - new Date(row.previous_at as string).getTime()) / hourMs;
  return { travelKm: Math.round(km * 10) / 10, travelKmh: hours > 0 ? Math.round(km / hours) : null };
}

/** Postgres text arrays arrive as arrays from node-postgres, as `{a,b}` text from some drivers. */
const arrayOf = (value: RiskIndicator[] | string): RiskIndicator[] =>
  Array.isArray(value) ? value : value === '{}' ? [] : (value.slice(1, -1).split(',') as RiskIndicator[]);

const viewOf = (row: ScanRow): ScanView => ({
  scanId: row.scan_id,
  scannedAt: new Date(row.scanned_at).toISOString(),
  gtin: row.gtin,
  serial: row.serial,
  batch: row.batch,
  verdict: row.verdict,
  riskIndicators: arrayOf(row.risk_indicators),
  scanNumber: row.scan_number,
  location: row.latitude === null || row.longitude === null ? null : { latitude: row.latitude, longitude: row.longitude },
  country: row.country,
  reported: row.reported,
  scannedBy: row.verified_by === publicPageVerifier ? 'public' : row.verified_by === row.account_id ? 'owner' : 'other',
  ...travelOf(row),
});

/** The scans `scannedBy` names (viewOf's rule as SQL). */
const scannedByFilter = (scannedBy: ScannedBy, ref: (value: unknown) => string): string =>
  scannedBy === 'public'
    ? `s.verified_by = ${ref(publicPageVerifier)}`
    : scannedBy === 'owner'
      ? 's.verified_by = s.account_id'
      : `s.verified_by <> s.account_id AND s.verified_by <> ${ref(publicPageVerifier)}`;

/**
 * A refused query: `details.fields` as every validation error has them (docs/API.md, Validation
 * errors), one per field named, beside the values given (which these refusals carried before).
 */
const invalid = (message: string, details: Record<string, unknown>, fields: ReadonlyArray<{ field: string; message: string }>) =>
  new HallmarkError('VALIDATION_ERROR', message, {
    ...details,
    fields: fields.map(({ field, message: text }) => ({ field, in: 'querystring', message: text })),
  });

const fromBeforeTo = [{ field: 'from', message: 'must be before to' }];

const isoDateTime = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2}))?$/i;

// The instants PostgreSQL's dates take: from year 1 (JavaScript takes year 0, PostgreSQL refuses it
// as 22008, and a `from` of 0000-01-01 was a 500) to the start of 9999-12-31, so that a range rounded
// up to whole days still ends within year 9999 (a day of year 10000 is no YYYY-MM-DD).
const firstInstantMs = Date.parse('0001-01-01T00:00:00Z');
const lastInstantMs = Date.parse('9999-12-31T00:00:00Z');
const withinYears = (ms: number) => ms >= firstInstantMs && ms <= lastInstantMs;

function instant(name: string, value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const date = new Date(value);
  if (!isoDateTime.test(value) || Number.isNaN(date.getTime()) || !writesRealDateTime(value)) {
    throw invalid(`${name} is not a date-time.`, { [name]: value }, [{ field: name, message: 'is not a date-time' }]);
  }
  if (!withinYears(date.getTime()))
    throw invalid(`${name} must be from 0001-01-01 up to 9999-12-31T00:00:00Z.`, { [name]: value }, [
      { field: name, message: 'must be from 0001-01-01 up to 9999-12-31T00:00:00Z' },
    ]);
  return date;
}

/** GET /scans: newest first, keyset-paged; `limit` above the page size is taken as the page size. */
/**
 * How many scans one page of combined filters looks at, at most, along the index of its first
 * filter. Filters that rarely or never meet (a country, a verdict and a flag that no scan has
 * together) would otherwise walk that index to its end: 0.4 s at 10 million scans. Such a page may
 * hold fewer than `limit` scans, or none, with `hasMore` and a cursor to go on from.
 */
export const scansExaminedPerPage = 20_000;

/**
 * How many of a code's scans before a listed one its `travelKm` looks through for the previous
 * located scan by the same verifier: a page of 1,000 reads at most 1,000 × this many of them, however
 * many scans of the code other verifiers (or unlocated ones) put in between.
 */
export const travelLookback = 100;

/** The SQL of a filter with an index of its own in page order (migration 0005), over a `$n` reference. */
const indexedFilter = {
  batch: (p: string) => `s.batch = ${p} AND s.batch IS NOT NULL`,
  country: (p: string) => `s.country = ${p} AND s.country IS NOT NULL`,
  verdict: (p: string) => `s.verdict = ${p}`,
};

/** WHERE clauses and their parameters, numbered as they are added. */
function clauses(owner: Principal) {
  const params: unknown[] = [owner.accountId, owner.environment];
  const where: string[] = ['s.account_id = $1', 's.environment = $2'];
  const ref = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  return { params, where, ref };
}

/**
 * The filter whose index a page of combined filters walks: the item, a batch, a country, a verdict,
 * the flagged scans; else the account's scans themselves (a GTIN alone or `reported` beside a flag).
 */
function walkedFilter(query: ListScansQuery, ref: (value: unknown) => string): string {
  if (query.serial && query.gtin) return `s.gtin = ${ref(query.gtin)} AND s.serial = ${ref(query.serial)}`;
  if (query.batch) return indexedFilter.batch(ref(query.batch));
  if (query.country) return indexedFilter.country(ref(query.country));
  if (query.verdict) return indexedFilter.verdict(ref(query.verdict));
  if (query.flag) return `s.risk_indicators <> '{}'`;
  return 'true';
}

export async function listScans(db: SqlDatabase, owner: Principal, query: ListScansQuery): Promise<ScanList> {
  const limit = Math.min(query.limit ?? 50, maxScansPageSize);
  const from = instant('from', query.from);
  const to = instant('to', query.to);
  if (from && to && from >= to) throw invalid('from must be before to.', { from: query.from, to: query.to }, fromBeforeTo);
  const cursor = query.cursor ? decodeInstantCursor(query.cursor, uuidPattern) : undefined;
  /** The account, environment, time range and cursor: what every query of a page shares. */
  const pageClauses = () => {
    const c = clauses(owner);
    if (from) c.where.push(`s.scanned_at >= ${c.ref(from)}`);
    if (to) c.where.push(`s.scanned_at < ${c.ref(to)}`);
    if (cursor) c.where.push(`(s.scanned_at, s.scan_id) < (${c.ref(cursor[0])}::timestamptz, ${c.ref(cursor[1])}::uuid)`);
    return c;
  };
  const { params, where, ref } = pageClauses();
  if (query.verdict) where.push(indexedFilter.verdict(ref(query.verdict)));
  // A flag alone: `<> '{}'` lets the planner walk the partial index of flagged scans (migration
  // 0005). Beside a filter with an index of its own it is left out: the planner would count the
  // flagged share twice (a flag implies `<> '{}'`), expect a few rows, and read every flagged scan
  // to sort them (0.1 s at a million scans in PostgreSQL, 1 s in PGlite, ten times that at ten
  // million) instead of walking the other filter's index newest first to the page's end (ms).
  const ownIndex = query.verdict || query.batch || query.country || query.serial;
  if (query.flag) {
    const p = ref(query.flag);
    where.push(ownIndex ? `${p} = ANY(s.risk_indicators)` : `${p} = ANY(s.risk_indicators) AND s.risk_indicators <> '{}'`);
  }
  if (query.gtin) where.push(`s.gtin = ${ref(query.gtin)}`);
  if (query.serial) where.push(`s.serial = ${ref(query.serial)}`);
  if (query.batch) where.push(indexedFilter.batch(ref(query.batch)));
  if (query.country) where.push(indexedFilter.country(ref(query.country)));
  if (query.scannedBy) where.push(scannedByFilter(query.scannedBy, ref));
  const reported = `EXISTS (SELECT 1 FROM code_reports r WHERE r.environment = s.environment AND r.gtin = s.gtin
                      AND r.serial = s.serial AND r.owner_account_id = s.account_id)`;
  if (query.reported !== undefined) where.push(query.reported ? reported : `NOT ${reported}`);

  // Filters combined: first find where the walk of one index stops (the scan `scansExaminedPerPage`
  // deep along it), then look no further than that (docs/API.md, Scans). `scannedBy` and `reported`
  // have no index in page order, so a page with either is bounded alone too: a brand with millions of
  // its own scans asking for the few of other accounts, or of its few reported codes, would
  // otherwise read every scan it has for one page.
  const narrowing = [query.verdict, query.flag, query.gtin, query.batch, query.country, query.reported, query.scannedBy].filter(
    (value) => value !== undefined,
  ).length;
  let walkEnd: { at_text: string; scan_id: string } | undefined;
  if (narrowing >= 2 || query.scannedBy || query.reported !== undefined) {
    const walk = pageClauses();
    walk.where.push(walkedFilter(query, walk.ref));
    [walkEnd] = await db.query<{ at_text: string; scan_id: string }>(
      `SELECT s.scanned_at::text AS at_text, s.scan_id FROM scans s WHERE ${walk.where.join(' AND ')}
        ORDER BY s.scanned_at DESC, s.scan_id DESC OFFSET ${walk.ref(scansExaminedPerPage - 1)} LIMIT 1`,
      walk.params,
    );
    if (walkEnd) where.push(`(s.scanned_at, s.scan_id) >= (${ref(walkEnd.at_text)}::timestamptz, ${ref(walkEnd.scan_id)}::uuid)`);
  }
  const limitRef = ref(limit + 1);
  const rows = await db.query<ScanRow>(
    `SELECT s.scan_id, s.scanned_at, s.scanned_at::text AS at_text, s.gtin, s.serial, s.batch, s.verdict, s.risk_indicators,
            s.scan_number, s.latitude, s.longitude, s.country, s.verified_by, s.account_id, ${reported} AS reported,
            p.latitude AS previous_latitude, p.longitude AS previous_longitude, p.scanned_at AS previous_at
       FROM (SELECT s.* FROM scans s WHERE ${where.join(' AND ')}
              ORDER BY s.scanned_at DESC, s.scan_id DESC LIMIT ${limitRef}) s
       -- The page's rows only (at most limit + 1): the code's previous located scan while the same
       -- account owned it, by scans_by_account_item (after a GTIN changes hands, the previous owner's
       -- scans are not this account's to measure against), reported by the same verifier, as the
       -- verdict's journey is (a location is its sender's word: a rival's made-up Sydney made the
       -- brand's own next scan in Paris a 16,959 km journey in this list until 2026-12-05).
       -- Among the code's travelLookback scans before this one only: another verifier's scans (a
       -- rival's flood of the code) are walked past, and so were all of them, for each row of a page.
       LEFT JOIN LATERAL (
         SELECT q.latitude, q.longitude, q.scanned_at
           FROM (SELECT q.latitude, q.longitude, q.scanned_at, q.verified_by, q.verdict FROM scans q
                  WHERE s.latitude IS NOT NULL AND q.account_id = s.account_id AND q.environment = s.environment
                    AND q.gtin = s.gtin AND q.serial = s.serial AND q.scanned_at < s.scanned_at
                  ORDER BY q.scanned_at DESC LIMIT ${travelLookback}) q
          WHERE q.verified_by = s.verified_by AND q.latitude IS NOT NULL AND q.longitude IS NOT NULL
            AND (q.verdict = 'COUNTERFEIT') = (s.verdict = 'COUNTERFEIT')
          ORDER BY q.scanned_at DESC LIMIT 1
       ) p ON true
      ORDER BY s.scanned_at DESC, s.scan_id DESC`,
    params,
  );
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  if (rows.length > limit && last) {
    return {
      scans: page.map(viewOf),
      pagination: { limit, hasMore: true, nextCursor: encodeCursor([last.at_text, last.scan_id]) },
    };
  }
  // A walk that stopped short of the index's end: the rest is after where it stopped.
  const nextCursor = walkEnd ? encodeCursor([walkEnd.at_text, walkEnd.scan_id]) : null;
  return { scans: page.map(viewOf), pagination: { limit, hasMore: nextCursor !== null, nextCursor } };
}

/** [from, to) of an analytics query: whole units of `unitMs`, defaulting to the last `defaultMs`, at most `maxMs`. */
function rangeOf(query: { from?: string; to?: string }, unitMs: number, defaultMs: number, maxMs: number, now: Date) {
  const ceil = (ms: number) => Math.ceil(ms / unitMs) * unitMs;
  const floor = (ms: number) => Math.floor(ms / unitMs) * unitMs;
  const to = ceil((instant('to', query.to) ?? now).getTime());
  const from = floor(instant('from', query.from)?.getTime() ?? to - defaultMs);
  if (from >= to) throw invalid('from must be before to.', { from: query.from, to: query.to }, fromBeforeTo);
  // A default `from` (before an early `to`) or a `to` rounded up may leave the years the database takes.
  if (!withinYears(from) || !withinYears(to))
    throw invalid('The range must lie from 0001-01-01 up to 9999-12-31T00:00:00Z.', { from: query.from, to: query.to }, [
      { field: 'from', message: 'must leave the range within 0001-01-01 and 9999-12-31T00:00:00Z' },
      { field: 'to', message: 'must leave the range within 0001-01-01 and 9999-12-31T00:00:00Z' },
    ]);
  if (to - from > maxMs) {
    throw invalid(`The range is longer than ${maxMs / dayMs} days.`, { from: query.from, to: query.to, maxDays: maxMs / dayMs }, [
      { field: 'from', message: `must be at most ${maxMs / dayMs} days before to` },
    ]);
  }
  return { from: new Date(from), to: new Date(to) };
}

/** GET /scans/aggregates: counts per hour or day by verdict, flag or country, from the hourly rollup. */
export async function scanAggregates(
  db: SqlDatabase,
  owner: Principal,
  query: ScanAggregatesQuery,
  now: Date,
): Promise<ScanAggregates> {
  const bucket = query.bucket ?? 'day';
  const { from, to } =
    bucket === 'hour' ? rangeOf(query, hourMs, dayMs, 31 * dayMs, now) : rangeOf(query, dayMs, 30 * dayMs, 366 * dayMs, now);
  const start = bucket === 'hour' ? 'hour' : `date_trunc('day', hour AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`;
  const rows = await db.query<{ start: Date | string; value: string; count: string | number }>(
    `SELECT ${start} AS start, value, sum(count)::bigint AS count FROM scan_counts_hourly
      WHERE account_id = $1 AND environment = $2 AND dimension = $3 AND hour >= $4 AND hour < $5
      GROUP BY 1, 2 ORDER BY 1, 2`,
    [owner.accountId, owner.environment, query.groupBy, from, to],
  );
  const buckets: ScanAggregates['buckets'] = [];
  for (const row of rows) {
    const at = new Date(row.start).toISOString();
    let current = buckets.at(-1);
    if (current?.start !== at) {
      current = { start: at, counts: {} };
      buckets.push(current);
    }
    current.counts[row.value] = Number(row.count);
  }
  return { groupBy: query.groupBy, bucket, from: from.toISOString(), to: to.toISOString(), buckets };
}

/**
 * What GET /scans/top-codes ranks by: both verdicts' scans, or one verdict's alone (`?verdict=`),
 * codes with none of it left out. Anyone can forge a COUNTERFEIT scan of a made-up serial, a hundred
 * of them fill the list, and a cloned code's SUSPICIOUS scans (which need a valid signature) fall off
 * it: ranked by SUSPICIOUS alone, the clone stays (a review of 2026-12-06, hostile-brand-views).
 */
const topCodesRank = {
  both: { score: 'sum(suspicious) + sum(counterfeit)', having: '' },
  SUSPICIOUS: { score: 'sum(suspicious)', having: 'HAVING sum(suspicious) > 0' },
  COUNTERFEIT: { score: 'sum(counterfeit)', having: 'HAVING sum(counterfeit) > 0' },
} as const;

/** GET /scans/top-codes: most suspicious and counterfeit scans over whole UTC days, from scan_code_days. */
export async function topScannedCodes(db: SqlDatabase, owner: Principal, query: TopCodesQuery, now: Date): Promise<TopCodes> {
  const { from, to } = rangeOf(query, dayMs, 30 * dayMs, 366 * dayMs, now);
  const limit = Math.min(query.limit ?? 10, 100);
  const rank = topCodesRank[query.verdict ?? 'both'];
  const rows = await db.query<{
    gtin: string;
    serial: string;
    suspicious: string | number;
    counterfeit: string | number;
    last_scanned_at: Date | string;
  }>(
    `SELECT gtin, serial, sum(suspicious)::bigint AS suspicious, sum(counterfeit)::bigint AS counterfeit, max(last_scanned_at) AS last_scanned_at
       FROM scan_code_days WHERE account_id = $1 AND environment = $2 AND day >= $3::date AND day < $4::date
      GROUP BY gtin, serial ${rank.having} ORDER BY ${rank.score} DESC, gtin, serial LIMIT $5`,
    [owner.accountId, owner.environment, from.toISOString().slice(0, 10), to.toISOString().slice(0, 10), limit],
  );
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    codes: rows.map((row) => ({
      gtin: row.gtin,
      serial: row.serial,
      suspicious: Number(row.suspicious),
      counterfeit: Number(row.counterfeit),
      lastScannedAt: new Date(row.last_scanned_at).toISOString(),
    })),
  };
}

/** GET /scans/countries: scans per country (those whose client sent one), from the hourly rollup. */
export async function scanCountries(
  db: SqlDatabase,
  owner: Principal,
  query: ScanCountriesQuery,
  now: Date,
): Promise<ScanCountries> {
  const { from, to } = rangeOf(query, hourMs, 30 * dayMs, 366 * dayMs, now);
  const rows = await db.query<{ value: string; count: string | number }>(
    `SELECT value, sum(count)::bigint AS count FROM scan_counts_hourly
      WHERE account_id = $1 AND environment = $2 AND dimension = 'country' AND hour >= $3 AND hour < $4
      GROUP BY value ORDER BY 2 DESC, 1`,
    [owner.accountId, owner.environment, from, to],
  );
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    countries: rows.map((row) => ({ country: row.value, scans: Number(row.count) })),
  };
}
