// Batch generation (issue #4, target d): codes per second through POST /code/generate/batch with
// 10,000 items per request, and a million codes in a row with the server's memory watched.
//
//   pnpm bench:batch                      (100,000 codes per form)
//   BENCH_CODES=1000000 pnpm bench:batch  (the million)
import { readFileSync } from 'node:fs';
import { machineLine, operatorKey, type RunningProduct, startDistributedProduct, startEmbeddedProduct } from './support.ts';

const total = Number(process.env.BENCH_CODES ?? 100_000);
const perBatch = 10_000;
const inFlight = 2;
const gtin = '09506000134352';

/** Resident memory of a process and its peak, in MiB (Linux). */
function memoryMiB(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const read = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024;
  return { rss: Math.round(read('VmRSS')), peak: Math.round(read('VmHWM')) };
}

async function run(start: () => Promise<RunningProduct>, form: string): Promise<string> {
  const product = await start();
  try {
    const account = await fetch(`${product.url}/api/v1/accounts`, {
      method: 'POST',
      headers: { 'x-api-key': operatorKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Batch brand', tier: 'enterprise' }),
    });
    const key = ((await account.json()) as { apiKey: { secret: string } }).apiKey.secret;
    const batches = Math.ceil(total / perBatch);
    let nextBatch = 0;
    let generated = 0;
    let failed = 0;
    let memoryAfterFirst: { rss: number; peak: number } | undefined;
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
        if (batch === 0) memoryAfterFirst = memoryMiB(product.pid);
      }
    };
    await Promise.all(Array.from({ length: inFlight }, worker));
    const seconds = (performance.now() - started) / 1000;
    const end = memoryMiB(product.pid);
    return `| ${form} | ${generated.toLocaleString('en')} | ${seconds.toFixed(1)} s | ${Math.round(generated / seconds)}/s | ${failed} | ${memoryAfterFirst?.rss} → ${end.rss} MiB (peak ${end.peak}) |`;
  } finally {
    await product.stop();
  }
}

const forms = (process.env.BENCH_FORMS ?? 'embedded,distributed').split(',');
const rows = [
  ...(forms.includes('embedded') ? [await run(startEmbeddedProduct, 'embedded (PGlite)')] : []),
  ...(forms.includes('distributed') ? [await run(startDistributedProduct, 'distributed (PostgreSQL, NATS)')] : []),
];
process.stdout.write(
  [
    `Batch generation, ${machineLine()}, ${perBatch.toLocaleString('en')} items per request, ${inFlight} requests in flight`,
    '',
    '| form | codes | time | codes/s | failed | server memory: after the first batch → at the end |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n'),
);
