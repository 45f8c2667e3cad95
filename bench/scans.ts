// The scans API at volume (issue #21, item 1), in the distributed form (PostgreSQL):
//   - seeds BENCH_SCANS stored scans (10 million by default) of one brand straight into verify-service's
//     `scans` table with generate_series, spread evenly over 90 days: 100,000 codes, 93% AUTHENTIC,
//     5% SUSPICIOUS, 2% COUNTERFEIT (the non-authentic ones on 500 "cloned" codes), 40% with a country
//     (independent of the verdict and flags, so filters combine as they would in life);
//     then fills the rollups from them as the scan-history projection would have (migration 0005's SQL);
//   - measures, over HTTP, p50/p95 of the aggregates (target p95 < 300 ms) and of the first page of
//     GET /scans, plain and filtered (target < 100 ms);
//   - exports BENCH_CSV_ROWS (1 million by default) rows as CSV, sampling the resident memory of the
//     gateway and verify-service every 250 ms: it should stay flat whatever the export's size.
// The seeding takes minutes and is never part of CI.
//
//   pnpm bench:scans
//   BENCH_SCANS=1000000 BENCH_CSV_ROWS=200000 pnpm bench:scans   (a quicker run)
import { readFileSync } from 'node:fs';
import { createPostgresDatabase } from '@hallmark/sql';
import { brandWithCode, machineLine, startDistributedProduct } from './support.ts';

const totalScans = Number(process.env.BENCH_SCANS ?? 10_000_000);
const csvRows = Number(process.env.BENCH_CSV_ROWS ?? 1_000_000);
const runs = Number(process.env.BENCH_RUNS ?? 30);
const days = 90;
const chunk = 1_000_000;

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
};

/** Resident memory of a process in MiB (/proc, Linux). */
function rssMiB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

async function timed(url: string, key: string, runsOf = runs): Promise<{ p50: number; p95: number; status: number }> {
  const times: number[] = [];
  let status = 0;
  for (let i = 0; i < runsOf; i++) {
    const started = performance.now();
    const response = await fetch(url, { headers: { 'x-api-key': key } });
    await response.arrayBuffer();
    times.push(performance.now() - started);
    status = response.status;
    if (status !== 200) throw new Error(`${url}: ${status}`);
  }
  return { p50: percentile(times, 50), p95: percentile(times, 95), status };
}

async function main() {
  console.log(machineLine());
  const product = await startDistributedProduct();
  const db = createPostgresDatabase({ connectionString: product.databaseUrl as string, maxConnections: 2 });
  try {
    const brand = await brandWithCode(product);
    const me = (await (await fetch(`${product.url}/api/v1/accounts/me`, { headers: { 'x-api-key': brand.key } })).json()) as {
      id?: string;
      account?: { id: string };
    };
    const accountId = me.id ?? me.account?.id;
    if (!accountId) throw new Error(`no account id in ${JSON.stringify(me)}`);

    const seedStarted = performance.now();
    for (let start = 1; start <= totalScans; start += chunk) {
      const end = Math.min(totalScans, start + chunk - 1);
      await db.query(
        `INSERT INTO scans (scan_id, environment, account_id, gtin, serial, batch, verdict, risk_indicators, scan_number,
                            scanned_at, verified_by, latitude, longitude, country)
         SELECT gen_random_uuid(), 'live', $1, $2,
                'S' || CASE WHEN n % 100 < 7 THEN n % 500 ELSE n % 100000 END,
                'L' || (n % 50),
                CASE WHEN n % 100 < 2 THEN 'COUNTERFEIT' WHEN n % 100 < 7 THEN 'SUSPICIOUS' ELSE 'AUTHENTIC' END,
                CASE WHEN n % 100 BETWEEN 2 AND 4 THEN ARRAY['EXCESSIVE_SCANS']
                     WHEN n % 100 BETWEEN 5 AND 6 THEN ARRAY['KNOWN_COUNTERFEIT_PATTERN', 'GEOGRAPHIC_IMPOSSIBILITY']
                     ELSE ARRAY[]::text[] END,
                1 + n / 100000,
                now() - (n::double precision / $3) * interval '${days} days',
                $1,
                CASE WHEN (n / 100) % 5 < 2 THEN 40 + (n % 20) END,
                CASE WHEN (n / 100) % 5 < 2 THEN (n % 30) - 5 END,
                CASE WHEN (n / 100) % 5 < 2 THEN (ARRAY['FR','DE','IT','ES','GB','US','CN','BR','IN','JP'])[1 + (n / 500) % 10] END
           FROM generate_series($4::bigint, $5::bigint) AS n`,
        [accountId, brand.gtin, totalScans, start, end],
      );
      console.log(`seeded ${end.toLocaleString('en')} scans (${((performance.now() - seedStarted) / 1000).toFixed(0)} s)`);
    }
    // The rollups, as the projection keeps them (migration 0005's backfill).
    await db.query(
      `INSERT INTO scan_counts_hourly (account_id, environment, dimension, hour, value, count)
       SELECT account_id, environment, 'verdict', date_trunc('hour', scanned_at), verdict, count(*) FROM scans WHERE account_id = $1 GROUP BY 1, 2, 4, 5
       ON CONFLICT (account_id, environment, dimension, hour, value) DO UPDATE SET count = scan_counts_hourly.count + excluded.count`,
      [accountId],
    );
    await db.query(
      `INSERT INTO scan_counts_hourly (account_id, environment, dimension, hour, value, count)
       SELECT account_id, environment, 'flag', date_trunc('hour', scanned_at), flag, count(*) FROM scans, unnest(risk_indicators) AS flag
        WHERE account_id = $1 GROUP BY 1, 2, 4, 5`,
      [accountId],
    );
    await db.query(
      `INSERT INTO scan_counts_hourly (account_id, environment, dimension, hour, value, count)
       SELECT account_id, environment, 'country', date_trunc('hour', scanned_at), country, count(*) FROM scans
        WHERE account_id = $1 AND country IS NOT NULL GROUP BY 1, 2, 4, 5`,
      [accountId],
    );
    await db.query(
      `INSERT INTO scan_code_days (account_id, environment, day, gtin, serial, suspicious, counterfeit, last_scanned_at)
       SELECT account_id, environment, (scanned_at AT TIME ZONE 'UTC')::date, gtin, serial,
              count(*) FILTER (WHERE verdict = 'SUSPICIOUS'), count(*) FILTER (WHERE verdict = 'COUNTERFEIT'), max(scanned_at)
         FROM scans WHERE account_id = $1 AND verdict <> 'AUTHENTIC' GROUP BY 1, 2, 3, 4, 5
       ON CONFLICT (account_id, environment, day, gtin, serial) DO UPDATE SET suspicious = excluded.suspicious`,
      [accountId],
    );
    await db.query('ANALYZE scans');
    await db.query('ANALYZE scan_counts_hourly');
    await db.query('ANALYZE scan_code_days');
    console.log(
      `seeded ${totalScans.toLocaleString('en')} scans and their rollups in ${((performance.now() - seedStarted) / 1000).toFixed(0)} s`,
    );

    const api = `${product.url}/api/v1`;
    const results: Array<[string, { p50: number; p95: number }]> = [];
    for (const [name, path] of [
      ['aggregates verdict by day, 90 days', `/scans/aggregates?groupBy=verdict&bucket=day&from=${isoDaysAgo(days)}`],
      ['aggregates flag by hour, 7 days', `/scans/aggregates?groupBy=flag&bucket=hour&from=${isoDaysAgo(7)}`],
      ['aggregates verdict by hour, 31 days', `/scans/aggregates?groupBy=verdict&bucket=hour&from=${isoDaysAgo(30)}`],
      ['countries, 90 days', `/scans/countries?from=${isoDaysAgo(days)}`],
      ['top codes, 90 days', `/scans/top-codes?from=${isoDaysAgo(days)}&limit=20`],
      ['GET /scans first page (50)', '/scans'],
      ['GET /scans first page, verdict=COUNTERFEIT', '/scans?verdict=COUNTERFEIT'],
      ['GET /scans first page, country=JP&flag=EXCESSIVE_SCANS', '/scans?country=JP&flag=EXCESSIVE_SCANS'],
      ['GET /scans first page, batch=L7', '/scans?batch=L7'],
      ['GET /scans first page, country=NZ (none)', '/scans?country=NZ'],
      // The worst case: two filters that each match hundreds of thousands of scans but never together.
      [
        'GET /scans first page, country=JP&verdict=COUNTERFEIT&flag=EXCESSIVE_SCANS (none)',
        '/scans?country=JP&verdict=COUNTERFEIT&flag=EXCESSIVE_SCANS',
      ],
      ['GET /scans first page, serial=S42', `/scans?gtin=${brand.gtin}&serial=S42`],
      ['GET /scans first page, last week', `/scans?from=${isoDaysAgo(7)}&to=${isoDaysAgo(6)}`],
    ] as const) {
      const result = await timed(`${api}${path}`, brand.key);
      results.push([name, result]);
      console.log(`${name.padEnd(58)} p50 ${result.p50.toFixed(1).padStart(7)} ms   p95 ${result.p95.toFixed(1).padStart(7)} ms`);
    }

    // The CSV export of the newest rows (a time range holding about that many): a tenth, then all of
    // csvRows. Memory that stays flat peaks alike in both, whatever the size.
    const gateway = product.processes.find((process) => process.name === 'gateway')?.pid as number;
    const verifier = product.processes.find((process) => process.name.startsWith('verify-service'))?.pid as number;
    for (const rowsWanted of [Math.round(csvRows / 10), csvRows]) {
      const fromMs = Date.now() - (rowsWanted / totalScans) * days * 86_400_000;
      const samples: Array<{ gateway: number; verify: number }> = [];
      const sample = () => samples.push({ gateway: rssMiB(gateway), verify: rssMiB(verifier) });
      sample();
      const timer = setInterval(sample, 250);
      const started = performance.now();
      const response = await fetch(`${api}/scans?format=csv&from=${new Date(fromMs).toISOString()}`, {
        headers: { 'x-api-key': brand.key },
      });
      let lines = 0;
      let bytes = 0;
      for await (const part of response.body as unknown as AsyncIterable<Uint8Array>) {
        bytes += part.length;
        for (const byte of part) if (byte === 10) lines += 1;
      }
      clearInterval(timer);
      sample();
      const seconds = (performance.now() - started) / 1000;
      const tenth = Math.max(1, Math.floor(samples.length / 10));
      const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
      console.log(
        `CSV export: ${(lines - 1).toLocaleString('en')} rows, ${(bytes / 1_048_576).toFixed(0)} MiB in ${seconds.toFixed(1)} s ` +
          `(${Math.round((lines - 1) / seconds).toLocaleString('en')} rows/s)`,
      );
      for (const which of ['gateway', 'verify'] as const) {
        const values = samples.map((s) => s[which]);
        console.log(
          `  ${which} RSS over ${samples.length} samples: ${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)} MiB; ` +
            `first tenth mean ${mean(values.slice(0, tenth)).toFixed(0)} MiB, last tenth mean ${mean(values.slice(-tenth)).toFixed(0)} MiB`,
        );
      }
    }
  } finally {
    await db.close();
    await product.stop();
  }
}

function isoDaysAgo(daysAgo: number): string {
  return new Date(Date.now() - daysAgo * 86_400_000).toISOString();
}

await main();
