// Batch generation (issue #4, target d): POST /code/generate/batch with 10,000 items per request,
// two in flight, and the server's memory watched. Used by bench/batch.ts and bench/codes.ts.
import { readFileSync } from 'node:fs';
import { operatorKey, type RunningProduct } from './support.ts';

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
    const batches = Math.ceil(total / perBatch);
    let nextBatch = 0;
    let generated = 0;
    let failed = 0;
    let memoryAfterFirst: number[] = [];
    let memoryHalfWay: number[] = [];
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
    return {
      codes: generated,
      seconds,
      codesPerSecond: Math.round(generated / seconds),
      failed,
      memory: product.processes.map(({ name, pid }, index) => {
        const end = memoryMiB(pid);
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
