// Batch generation (issue #4, target d; issue #19, targets 3 and 5): codes per second through POST
// /code/generate/batch with 10,000 items per request, the server's memory watched, and the storage
// the codes took: PostgreSQL's every table (pg_total_relation_size) or the embedded data folder's
// disk space, after minus before, divided by the codes.
// (`pnpm bench:codes` runs the same in its one go with the other targets of #4.)
//
//   pnpm bench:batch                      (100,000 codes per form)
//   BENCH_CODES=1000000 pnpm bench:batch  (the million)
//   BENCH_EMBEDDED_ENV='{"UV_THREADPOOL_SIZE":"4"}' pnpm bench:batch   (settings for the embedded process)
//   BENCH_DISTRIBUTED_ENV='{"NODE_OPTIONS":"…"}' pnpm bench:batch       (settings for every distributed process)
import { cpuText, inFlight, memoryText, perBatch, runBatches, storageText } from './batch-load.ts';
import { machineLine, type RunningProduct, startDistributedProduct, startEmbeddedProduct } from './support.ts';

const total = Number(process.env.BENCH_CODES ?? 100_000);
const embeddedEnv = JSON.parse(process.env.BENCH_EMBEDDED_ENV ?? '{}') as Record<string, string>;
const distributedEnv = JSON.parse(process.env.BENCH_DISTRIBUTED_ENV ?? '{}') as Record<string, string>;

async function row(start: () => Promise<RunningProduct>, form: string): Promise<string> {
  const run = await runBatches(start, total);
  const projected =
    run.projectedAfterSeconds === undefined ? '' : ` (projections caught up ${run.projectedAfterSeconds.toFixed(1)} s after)`;
  return `| ${form} | ${run.codes.toLocaleString('en')} | ${run.seconds.toFixed(1)} s${projected} | ${run.codesPerSecond}/s | ${run.failed} | ${cpuText(run)} | ${storageText(run)} | ${memoryText(run)} |`;
}

const forms = (process.env.BENCH_FORMS ?? 'embedded,distributed').split(',');
const rows = [
  ...(forms.includes('embedded') ? [await row(() => startEmbeddedProduct(embeddedEnv), 'embedded (PGlite)')] : []),
  ...(forms.includes('distributed')
    ? [await row(() => startDistributedProduct({}, distributedEnv), 'distributed (PostgreSQL, NATS)')]
    : []),
];
process.stdout.write(
  [
    `Batch generation, ${machineLine()}, ${perBatch.toLocaleString('en')} items per request, ${inFlight} requests in flight`,
    '',
    'Targets (#19): 15,000 codes/s distributed, 10,000 embedded; at most 1 KB stored per code in PostgreSQL (every table: heap, indexes, TOAST), the embedded data folder within 1.5 times that',
    '',
    '| form | codes | time | codes/s | failed | server CPU µs per code, projections included (PostgreSQL not) | stored per code (what the codes added, after the projections caught up) | memory of each server process: after the first batch → half way → at the end |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n'),
);
