// The scans API at volume (issue #21, item 1; issue #20's console overview), in either form:
//   - seeds N stored scans (10 million by default) of one brand straight into verify-service's
//     tables, by the projection's own statement with generate_series in place of the events
//     (bench/scans-seed.ts): the `scans` rows, the rollups (scan_counts_hourly, scan_code_days) and
//     a review queue of 200 reports. Distributed: into PostgreSQL while the product runs. Embedded:
//     the product is started once (to migrate and to create the brand), stopped, its data folder's
//     PGlite opened by this process and seeded (a CHECKPOINT after each statement), then started again;
//   - measures over HTTP, sequentially, p50/p95 (after one discarded warm-up request) of the
//     aggregates (target p95 < 300 ms), the console overview's calls (issue #20: p95 < 300 ms) and the
//     first page of GET /scans, plain and filtered (target < 100 ms), with the product's CPU per request;
//   - exports the newest csvRows/10, then csvRows (1 million by default) scans as CSV, sampling the
//     memory (RSS and V8 heap, every 100 ms, bench/scans-memory-probe.mjs) of the embedded process,
//     or of the gateway and verify-service: flat memory peaks alike in both exports.
// The seeding takes minutes (PGlite: much longer) and is never part of CI.
//
//   pnpm bench:scans                                   (distributed, 10 million scans)
//   pnpm bench:scans --form embedded                   (embedded, 10 million scans)
//   pnpm bench:scans --form embedded,distributed --scans 1000000 --csv-rows 200000   (a quicker run)
// Settings: --form (or BENCH_FORMS), --scans (BENCH_SCANS), --csv-rows (BENCH_CSV_ROWS), --runs (BENCH_RUNS, 30);
// --data-dir <folder> (embedded): seed into that folder and keep it, or measure a folder seeded so before again.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createPgliteDatabase, createPostgresDatabase, type SqlDatabase } from '@hallmark/sql';
import { seedScans } from './scans-seed.ts';
import {
  brandWithCode,
  cpuMicroseconds,
  machineLine,
  type RunningProduct,
  startDistributedProduct,
  startEmbeddedProduct,
} from './support.ts';

const { values: options } = parseArgs({
  options: {
    form: { type: 'string', default: process.env.BENCH_FORMS ?? 'distributed' },
    scans: { type: 'string', default: process.env.BENCH_SCANS ?? '10000000' },
    'csv-rows': { type: 'string', default: process.env.BENCH_CSV_ROWS ?? '1000000' },
    runs: { type: 'string', default: process.env.BENCH_RUNS ?? '30' },
    // Embedded only: seed into this folder and keep it; a folder seeded so before is measured again without seeding.
    'data-dir': { type: 'string' },
  },
});
const forms = options.form.split(',') as Array<'embedded' | 'distributed'>;
const totalScans = Number(options.scans);
const csvRows = Math.min(totalScans, Number(options['csv-rows']));
const runs = Number(options.runs);
const days = 90;
const command = `pnpm bench:scans --form ${forms.join(',')} --scans ${totalScans} --csv-rows ${csvRows} --runs ${runs}`;
const probe = fileURLToPath(new URL('./scans-memory-probe.mjs', import.meta.url));
const MiB = 1_048_576;

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
};

interface Timing {
  form: string;
  group: 'aggregates' | 'overview (#20)' | 'GET /scans';
  name: string;
  p50: number;
  p95: number;
  /** CPU of the product's processes (not PostgreSQL's) per request, in ms. */
  cpuMs: number;
  target: number;
}

interface Export {
  form: string;
  rows: number;
  seconds: number;
  mib: number;
  memory: Array<{ process: string; rss: [number, number]; heap: [number, number]; liveHeap: [number, number] | undefined }>;
}

interface FormRun {
  form: string;
  seedSeconds: number;
  storage: string;
  timings: Timing[];
  exports: Export[];
}

function isoDaysAgo(daysAgo: number): string {
  return new Date(Date.now() - daysAgo * 86_400_000).toISOString();
}

/** The product's processes' CPU time, in µs. */
const productCpu = (product: RunningProduct) => product.processes.reduce((sum, { pid }) => sum + cpuMicroseconds(pid), 0);

async function get(url: string, key: string): Promise<Response> {
  const response = await fetch(url, { headers: { 'x-api-key': key } });
  if (response.status !== 200) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  return response;
}

async function timed(product: RunningProduct, url: string, key: string): Promise<{ p50: number; p95: number; cpuMs: number }> {
  await (await get(url, key)).arrayBuffer();
  const times: number[] = [];
  const cpuBefore = productCpu(product);
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await (await get(url, key)).arrayBuffer();
    times.push(performance.now() - started);
  }
  return { p50: percentile(times, 50), p95: percentile(times, 95), cpuMs: (productCpu(product) - cpuBefore) / 1000 / runs };
}

/** Where each product process writes its memory samples (bench/scans-memory-probe.mjs). */
const memoryEnv = (folder: string) => ({
  NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${probe}`.trim(),
  HALLMARK_BENCH_MEMORY_FILE: join(folder, 'memory-{pid}.jsonl'),
});

function memorySamples(folder: string, pid: number, from: number, to: number) {
  return readFileSync(join(folder, `memory-${pid}.jsonl`), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { at: number; rss: number; heapUsed: number; afterMajorGc?: boolean })
    .filter((sample) => sample.at >= from && sample.at <= to);
}

const span = ([min, max]: [number, number]) => `${min.toFixed(0)}–${max.toFixed(0)} (${(max - min).toFixed(0)})`;

async function folderBytes(folder: string): Promise<number> {
  let bytes = 0;
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) bytes += statSync(join(entry.parentPath, entry.name)).size;
  }
  return bytes;
}

async function accountIdOf(product: RunningProduct, key: string): Promise<string> {
  const me = (await (await get(`${product.url}/api/v1/accounts/me`, key)).json()) as { id?: string; account?: { id: string } };
  const accountId = me.id ?? me.account?.id;
  if (!accountId) throw new Error(`no account id in ${JSON.stringify(me)}`);
  return accountId;
}

const progress = (started: number) => (seeded: number) =>
  console.log(`  seeded ${seeded.toLocaleString('en')} scans (${((performance.now() - started) / 1000).toFixed(0)} s)`);

/** The distributed form, seeded in its PostgreSQL database while it runs. */
async function distributed(memoryFolder: string) {
  const product = await startDistributedProduct({}, memoryEnv(memoryFolder));
  const brand = await brandWithCode(product);
  const accountId = await accountIdOf(product, brand.key);
  // No statement timeout: seeding millions of rows and a CHECKPOINT take longer than any request's statement.
  const db = createPostgresDatabase({
    connectionString: product.databaseUrl as string,
    maxConnections: 2,
    statementTimeoutMs: 0,
  });
  const started = performance.now();
  const newestAt = Date.now();
  try {
    await seedScans(db, {
      accountId,
      gtin: brand.gtin,
      total: totalScans,
      days,
      now: new Date(newestAt),
      chunk: 1_000_000,
      onProgress: progress(started),
    });
    const seedSeconds = (performance.now() - started) / 1000;
    const [size] = await db.query<{ bytes: string }>(
      `SELECT sum(pg_total_relation_size(t))::text AS bytes FROM unnest(ARRAY['scans', 'scan_counts_hourly', 'scan_code_days']::regclass[]) AS t`,
    );
    const storage = `scans and rollups ${(Number(size?.bytes) / MiB).toFixed(0)} MiB (PostgreSQL, indexes included)`;
    return { product, brand, seedSeconds, newestAt, storage, close: () => db.close() };
  } catch (error) {
    await db.close();
    await product.stop();
    throw error;
  }
}

interface Seeded {
  total: number;
  brand: Awaited<ReturnType<typeof brandWithCode>>;
  seedSeconds: number;
  /** When the newest scan was made (ms): the CSV export's ranges count back from it. */
  newestAt: number;
}

/**
 * The embedded form: started to migrate and make the brand, stopped, its PGlite seeded here, started
 * again. With --data-dir the folder is kept, and a folder seeded before is started as it is.
 */
async function embedded(memoryFolder: string) {
  const kept = options['data-dir'];
  const dataDir = kept ?? (await mkdtemp(join(tmpdir(), 'hallmark-bench-scans-')));
  const seededFile = join(dataDir, 'bench-scans.json');
  const env = { HALLMARK_DATA_DIR: dataDir, ...memoryEnv(memoryFolder) };
  const close = async () => {
    if (!kept) await rm(dataDir, { recursive: true, force: true });
  };
  try {
    let seeded = existsSync(seededFile) ? (JSON.parse(readFileSync(seededFile, 'utf8')) as Seeded) : undefined;
    if (seeded && seeded.total !== totalScans) throw new Error(`${dataDir} holds ${seeded.total} scans, not ${totalScans}`);
    if (seeded) console.log(`  ${dataDir} was seeded before: measured as it is`);
    else seeded = await seedEmbedded(dataDir, env, seededFile);
    const storage = `data folder ${((await folderBytes(dataDir)) / MiB).toFixed(0)} MiB (PGlite, WAL included)`;
    const restarted = performance.now();
    const product = await startEmbeddedProduct(env);
    console.log(`  started on the seeded folder in ${((performance.now() - restarted) / 1000).toFixed(1)} s`);
    return { product, brand: seeded.brand, seedSeconds: seeded.seedSeconds, newestAt: seeded.newestAt, storage, close };
  } catch (error) {
    await close();
    throw error;
  }
}

async function seedEmbedded(dataDir: string, env: Record<string, string>, seededFile: string): Promise<Seeded> {
  const first = await startEmbeddedProduct(env);
  let brand: Seeded['brand'];
  let accountId: string;
  try {
    brand = await brandWithCode(first);
    accountId = await accountIdOf(first, brand.key);
  } finally {
    await first.stop();
  }
  const started = performance.now();
  const newestAt = Date.now();
  const db: SqlDatabase = await createPgliteDatabase(join(dataDir, 'pglite'));
  try {
    await seedScans(db, {
      accountId,
      gtin: brand.gtin,
      total: totalScans,
      days,
      now: new Date(newestAt),
      chunk: 250_000,
      // PGlite has no checkpointer: without one after each statement its WAL holds every row.
      afterChunk: async () => {
        await db.query('CHECKPOINT');
      },
      onProgress: progress(started),
    });
    await db.query('CHECKPOINT');
  } finally {
    await db.close();
  }
  const seeded: Seeded = { total: totalScans, brand, seedSeconds: (performance.now() - started) / 1000, newestAt };
  await writeFile(seededFile, JSON.stringify(seeded));
  return seeded;
}

async function measureForm(form: 'embedded' | 'distributed'): Promise<FormRun> {
  const memoryFolder = await mkdtemp(join(tmpdir(), 'hallmark-bench-memory-'));
  console.log(`\n${form}: seeding ${totalScans.toLocaleString('en')} scans over ${days} days`);
  const { product, brand, seedSeconds, newestAt, storage, close } =
    form === 'embedded' ? await embedded(memoryFolder) : await distributed(memoryFolder);
  const timings: Timing[] = [];
  const exports: Export[] = [];
  try {
    console.log(`  seeded in ${seedSeconds.toFixed(0)} s; ${storage}`);
    const api = `${product.url}/api/v1`;
    const cases: Array<[Timing['group'], string, string]> = [
      ['aggregates', 'verdict by day, 90 days', `/scans/aggregates?groupBy=verdict&bucket=day&from=${isoDaysAgo(days)}`],
      ['aggregates', 'verdict by hour, 30 days', `/scans/aggregates?groupBy=verdict&bucket=hour&from=${isoDaysAgo(30)}`],
      ['aggregates', 'flag by day, 90 days', `/scans/aggregates?groupBy=flag&bucket=day&from=${isoDaysAgo(days)}`],
      ['aggregates', 'flag by hour, 7 days', `/scans/aggregates?groupBy=flag&bucket=hour&from=${isoDaysAgo(7)}`],
      ['aggregates', 'country by day, 90 days', `/scans/aggregates?groupBy=country&bucket=day&from=${isoDaysAgo(days)}`],
      ['aggregates', 'countries, 90 days', `/scans/countries?from=${isoDaysAgo(days)}`],
      ['aggregates', 'top codes, 90 days (20)', `/scans/top-codes?from=${isoDaysAgo(days)}&limit=20`],
      ['overview (#20)', 'verdicts by hour, last 24 h', '/scans/aggregates?groupBy=verdict&bucket=hour'],
      ['overview (#20)', 'verdicts by day, last 7 d', `/scans/aggregates?groupBy=verdict&bucket=day&from=${isoDaysAgo(7)}`],
      ['overview (#20)', 'verdicts by day, last 30 d', '/scans/aggregates?groupBy=verdict&bucket=day'],
      ['overview (#20)', 'recent SUSPICIOUS scans (10)', '/scans?verdict=SUSPICIOUS&limit=10'],
      ['overview (#20)', 'recent COUNTERFEIT scans (10)', '/scans?verdict=COUNTERFEIT&limit=10'],
      ['overview (#20)', 'reported codes: review queue (20)', '/code/reports?status=pending&limit=20'],
      ['overview (#20)', 'reported codes: their scans (10)', '/scans?reported=true&limit=10'],
      ['GET /scans', 'first page (50)', '/scans'],
      ['GET /scans', 'verdict=COUNTERFEIT', '/scans?verdict=COUNTERFEIT'],
      ['GET /scans', 'flag=EXCESSIVE_SCANS', '/scans?flag=EXCESSIVE_SCANS'],
      ['GET /scans', 'country=JP&flag=EXCESSIVE_SCANS', '/scans?country=JP&flag=EXCESSIVE_SCANS'],
      ['GET /scans', 'batch=L7', '/scans?batch=L7'],
      ['GET /scans', `gtin&serial=S42`, `/scans?gtin=${brand.gtin}&serial=S42`],
      ['GET /scans', 'one day a week ago', `/scans?from=${isoDaysAgo(7)}&to=${isoDaysAgo(6)}`],
      ['GET /scans', 'reported=false', '/scans?reported=false'],
      ['GET /scans', 'country=NZ (matches none)', '/scans?country=NZ'],
      // The worst case: filters that each match hundreds of thousands of scans but never together.
      ['GET /scans', 'JP&COUNTERFEIT&EXCESSIVE_SCANS (none)', '/scans?country=JP&verdict=COUNTERFEIT&flag=EXCESSIVE_SCANS'],
    ];
    for (const [group, name, path] of cases) {
      const result = await timed(product, `${api}${path}`, brand.key);
      timings.push({ form, group, name, ...result, target: group === 'GET /scans' ? 100 : 300 });
      console.log(
        `  ${`${group}: ${name}`.padEnd(54)} p50 ${result.p50.toFixed(1).padStart(7)} ms  p95 ${result.p95.toFixed(1).padStart(7)} ms  CPU ${result.cpuMs.toFixed(1).padStart(6)} ms/req`,
      );
    }

    // The CSV export of the newest rows (a time range holding about that many): a tenth, then all of csvRows.
    const watched = product.processes.filter(
      ({ name }) => name === 'embedded' || name === 'gateway' || name.startsWith('verify-service'),
    );
    // Flat memory: the full export peaks as the tenth does, and the same export again adds nothing.
    for (const rowsWanted of [Math.round(csvRows / 10), csvRows, csvRows]) {
      const fromMs = newestAt - (rowsWanted / totalScans) * days * 86_400_000;
      const started = performance.now();
      const startedAt = Date.now();
      const response = await get(`${api}/scans?format=csv&from=${new Date(fromMs).toISOString()}`, brand.key);
      let lines = 0;
      let bytes = 0;
      for await (const part of response.body as unknown as AsyncIterable<Uint8Array>) {
        bytes += part.length;
        for (const byte of part) if (byte === 10) lines += 1;
      }
      const seconds = (performance.now() - started) / 1000;
      // The probe writes every 100 ms: let it write the export's last sample.
      await new Promise((resolve) => setTimeout(resolve, 250));
      const memory = watched.map(({ name, pid }) => {
        const samples = memorySamples(memoryFolder, pid, startedAt, Date.now());
        const range = (values: number[]): [number, number] => [Math.min(...values) / MiB, Math.max(...values) / MiB];
        const afterGc = samples.filter((s) => s.afterMajorGc).map((s) => s.heapUsed);
        return {
          process: name,
          rss: range(samples.map((s) => s.rss)),
          heap: range(samples.map((s) => s.heapUsed)),
          liveHeap: afterGc.length > 0 ? range(afterGc) : undefined,
        };
      });
      const done: Export = { form, rows: lines - 1, seconds, mib: bytes / MiB, memory };
      exports.push(done);
      console.log(
        `  CSV export: ${done.rows.toLocaleString('en')} rows, ${done.mib.toFixed(0)} MiB in ${seconds.toFixed(1)} s (${Math.round(done.rows / seconds).toLocaleString('en')} rows/s)`,
      );
      for (const m of memory) {
        console.log(
          `    ${m.process}: RSS ${span(m.rss)} MiB, heap ${span(m.heap)} MiB, ` +
            `live heap after major GCs ${m.liveHeap ? `${span(m.liveHeap)} MiB` : '(no major GC)'}`,
        );
      }
    }
    return { form, seedSeconds, storage, timings, exports };
  } finally {
    await product.stop();
    await close();
    await rm(memoryFolder, { recursive: true, force: true });
  }
}

function summary(results: FormRun[]): void {
  const n = totalScans.toLocaleString('en');
  console.log(`\n## Summary: ${n} scans; ${machineLine()}\n\n${command}\n`);
  for (const run of results) console.log(`${run.form}: seeded in ${run.seedSeconds.toFixed(0)} s; ${run.storage}`);
  console.log('\n| form | group | request | p50 ms | p95 ms | product CPU ms/req | target p95 | met |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const t of results.flatMap((run) => run.timings)) {
    console.log(
      `| ${t.form} | ${t.group} | ${t.name} | ${t.p50.toFixed(1)} | ${t.p95.toFixed(1)} | ${t.cpuMs.toFixed(1)} | < ${t.target} | ${t.p95 < t.target ? 'yes' : '**no**'} |`,
    );
  }
  console.log(
    '\n| form | CSV rows | seconds | rows/s | MiB | process | RSS min–max MiB (max−min) | heap min–max MiB (max−min) | live heap after major GCs, MiB |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const e of results.flatMap((run) => run.exports)) {
    for (const m of e.memory) {
      console.log(
        `| ${e.form} | ${e.rows.toLocaleString('en')} | ${e.seconds.toFixed(1)} | ${Math.round(e.rows / e.seconds).toLocaleString('en')} | ${e.mib.toFixed(0)} | ${m.process} | ` +
          `${span(m.rss)} | ${span(m.heap)} | ${m.liveHeap ? span(m.liveHeap) : 'no major GC'} |`,
      );
    }
  }
  console.log(`\nRe-run: ${command}`);
}

async function main() {
  console.log(`${machineLine()}\n${command}`);
  const results: FormRun[] = [];
  for (const form of forms) results.push(await measureForm(form));
  summary(results);
}

await main();
