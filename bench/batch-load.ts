// Batch generation (issue #4, target d): POST /code/generate/batch with 10,000 items per request,
// two in flight, and the server's memory watched. Used by bench/batch.ts and bench/codes.ts.
import { readFileSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createPostgresDatabase } from '@hallmark/sql';
import { cpuMicroseconds, operatorKey, type RunningProduct, untilQuiet } from './support.ts';

export const perBatch = 10_000;
export const inFlight = 2;
const gtin = '09506000134352';

/** Resident memory of a process and its peak, in MiB (Linux). */
function memoryMiB(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const read = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024;
  return { rss: Math.round(read('VmRSS')), peak: Math.round(read('VmHWM')) };
}

export interface BatchRun {
  codes: number;
  seconds: number;
  codesPerSecond: number;
  failed: number;
  /** Each server process's resident memory after the first batch, half way and at the end, and its peak, in MiB. */
  memory: Array<{ name: string; afterFirst: number; halfWay: number; end: number; peak: number }>;
  /** Seconds after the last batch until verify-service's and compliance-service's projections held every code (distributed form). */
  projectedAfterSeconds: number | undefined;
  /** What the codes added to the database, once every projection had caught up (see storageOf). */
  storage: Storage;
  /**
   * CPU each server process spent per code, µs, from the first batch until the projections caught up
   * (so the projections' work is counted); PostgreSQL's own processes are not.
   */
  cpuPerCode: Array<{ name: string; micros: number }>;
}

/** Bytes the product stores, in all and per table (PostgreSQL) or in its data folder (embedded). */
export interface Storage {
  bytes: number;
  tables: Array<{ name: string; bytes: number }>;
}

/** Disk space (allocated blocks) of every file under a folder. */
async function folderBytes(folder: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) total += await folderBytes(path);
    else if (entry.isFile()) total += (await stat(path)).blocks * 512;
  }
  return total;
}

/**
 * Waits (at most 5 minutes) until the distributed form's projections hold at least `codes` codes:
 * verify-service's code directory and compliance-service's provenance assets. Resolves with the
 * seconds it waited; undefined for the embedded form, whose database only its process can read.
 */
async function untilProjected(product: RunningProduct, codes: number): Promise<number | undefined> {
  if (!product.databaseUrl) return undefined;
  const db = createPostgresDatabase({ connectionString: product.databaseUrl, maxConnections: 1 });
  const started = performance.now();
  try {
    const deadline = Date.now() + 300_000;
    for (;;) {
      const [row] = await db.query<{ directory: string; assets: string }>(
        `SELECT (SELECT count(*) FROM code_directory)::text AS directory,
                (SELECT count(*) FROM provenance_assets WHERE asset_id LIKE 'code_%')::text AS assets`,
      );
      if ((Number(row?.directory) >= codes && Number(row?.assets) >= codes) || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    return (performance.now() - started) / 1000;
  } finally {
    await db.close();
  }
}

/**
 * What the product stores now: in the distributed form pg_total_relation_size (heap, indexes,
 * TOAST) of every table of its database, summed and per table; in the embedded form the disk space
 * of its whole data folder (PGlite's files, WAL included, the blob folder, the lock).
 */
export async function storageOf(product: RunningProduct): Promise<Storage> {
  if (product.databaseUrl) {
    const db = createPostgresDatabase({ connectionString: product.databaseUrl, maxConnections: 1 });
    try {
      const rows = await db.query<{ name: string; bytes: string }>(
        `SELECT c.relname AS name, pg_total_relation_size(c.oid)::text AS bytes FROM pg_class c
         JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE c.relkind IN ('r', 'p', 'm') AND n.nspname NOT IN ('pg_catalog', 'information_schema') ORDER BY 2 DESC`,
      );
      const tables = rows.map((row) => ({ name: row.name, bytes: Number(row.bytes) }));
      return { bytes: tables.reduce((sum, table) => sum + table.bytes, 0), tables };
    } finally {
      await db.close();
    }
  }
  // The data folder, with PGlite's own folders (base, pg_wal, …) and the product's others by name.
  const dataDir = product.dataDir as string;
  const parts: Array<{ name: string; bytes: number }> = [];
  for (const entry of await readdir(dataDir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    if (entry.name !== 'pglite') parts.push({ name: entry.name, bytes: await folderBytes(join(dataDir, entry.name)) });
    else {
      for (const inner of await readdir(join(dataDir, 'pglite'), { withFileTypes: true })) {
        if (inner.isDirectory())
          parts.push({ name: `pglite/${inner.name}`, bytes: await folderBytes(join(dataDir, 'pglite', inner.name)) });
      }
    }
  }
  return { bytes: await folderBytes(dataDir), tables: parts };
}

/**
 * Generates `total` codes through POST /code/generate/batch on a product started for it, 10,000
 * items per request, two requests in flight, and watches the server's memory.
 */
export async function runBatches(start: () => Promise<RunningProduct>, total: number): Promise<BatchRun> {
  const product = await start();
  try {
    const account = await fetch(`${product.url}/api/v1/accounts`, {
      method: 'POST',
      headers: { 'x-api-key': operatorKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Batch brand', tier: 'enterprise' }),
    });
    const created = (await account.json()) as { account: { id: string }; apiKey: { secret: string } };
    const key = created.apiKey.secret;
    // The brand signs only GTINs it owns (docs/SIGNING.md).
    await fetch(`${product.url}/api/v1/accounts/${created.account.id}/gtins`, {
      method: 'POST',
      headers: { 'x-api-key': operatorKey, 'content-type': 'application/json' },
      body: JSON.stringify({ gtin }),
    });
    await untilQuiet([product]);
    const storedBefore = await storageOf(product);
    const batches = Math.ceil(total / perBatch);
    let nextBatch = 0;
    let generated = 0;
    let failed = 0;
    let memoryAfterFirst: number[] = [];
    let memoryHalfWay: number[] = [];
    const cpuBefore = product.processes.map(({ pid }) => cpuMicroseconds(pid));
    const started = performance.now();
    const worker = async () => {
      while (nextBatch < batches) {
        const batch = nextBatch++;
        const items = Array.from({ length: perBatch }, (_, i) => ({ gtin, serialNumber: `B${batch}-${i}` }));
        const response = await fetch(`${product.url}/api/v1/code/generate/batch`, {
          method: 'POST',
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          body: JSON.stringify({ items }),
        });
        const body = (await response.json()) as { results?: Array<{ code?: unknown }> };
        const ok = body.results?.filter((result) => result.code).length ?? 0;
        generated += ok;
        failed += perBatch - ok;
        if (batch === 0) memoryAfterFirst = product.processes.map(({ pid }) => memoryMiB(pid).rss);
        if (batch === Math.floor(batches / 2)) memoryHalfWay = product.processes.map(({ pid }) => memoryMiB(pid).rss);
      }
    };
    await Promise.all(Array.from({ length: inFlight }, worker));
    const seconds = (performance.now() - started) / 1000;
    const memoryAtEnd = product.processes.map(({ pid }) => memoryMiB(pid));
    // The projections (code directory, Merkle trees) catch up before the storage is measured.
    const projectedAfterSeconds = await untilProjected(product, generated);
    const cpuAfter = product.processes.map(({ pid }) => cpuMicroseconds(pid));
    await untilQuiet([product]);
    const storedAfter = await storageOf(product);
    const tableBefore = new Map(storedBefore.tables.map((table) => [table.name, table.bytes]));
    return {
      codes: generated,
      seconds,
      codesPerSecond: Math.round(generated / seconds),
      failed,
      projectedAfterSeconds,
      cpuPerCode: product.processes.map(({ name }, index) => ({
        name,
        micros: Math.round(((cpuAfter[index] ?? 0) - (cpuBefore[index] ?? 0)) / Math.max(1, generated)),
      })),
      storage: {
        bytes: storedAfter.bytes - storedBefore.bytes,
        tables: storedAfter.tables
          .map((table) => ({ name: table.name, bytes: table.bytes - (tableBefore.get(table.name) ?? 0) }))
          .filter((table) => table.bytes > 0)
          .sort((a, b) => b.bytes - a.bytes),
      },
      memory: product.processes.map(({ name }, index) => {
        const end = memoryAtEnd[index] ?? { rss: 0, peak: 0 };
        return {
          name,
          afterFirst: memoryAfterFirst[index] ?? 0,
          halfWay: memoryHalfWay[index] ?? 0,
          end: end.rss,
          peak: end.peak,
        };
      }),
    };
  } finally {
    await product.stop();
  }
}

/** "gateway 216 → 260 → 268 MiB (peak 349); code-service …": after the first batch → half way → at the end. */
export function memoryText(run: BatchRun): string {
  return run.memory
    .map((process) => `${process.name} ${process.afterFirst} → ${process.halfWay} → ${process.end} MiB (peak ${process.peak})`)
    .join('; ');
}

/** "412 (gateway 46, code-service 150, …)": server CPU µs per code, in all and per process. */
export function cpuText(run: BatchRun): string {
  const total = run.cpuPerCode.reduce((sum, process) => sum + process.micros, 0);
  return run.cpuPerCode.length === 1
    ? String(total)
    : `${total} (${run.cpuPerCode.map((process) => `${process.name} ${process.micros}`).join(', ')})`;
}

/** "1,234 B per code (events 600, codes 300, …)": what the run's codes added, per code. */
export function storageText(run: BatchRun): string {
  const perCode = (bytes: number) => Math.round(bytes / Math.max(1, run.codes));
  const tables = run.storage.tables
    .filter((table) => perCode(table.bytes) > 0)
    .map((table) => `${table.name} ${perCode(table.bytes)}`)
    .join(', ');
  return `${perCode(run.storage.bytes).toLocaleString('en')} B per code${tables ? ` (${tables})` : ''}`;
}
