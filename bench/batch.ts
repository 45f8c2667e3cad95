// Batch generation (issue #4, target d): codes per second through POST /code/generate/batch with
// 10,000 items per request, and a million codes in a row with the server's memory watched.
// (`pnpm bench:codes` runs the same in its one go with the other targets of #4.)
//
//   pnpm bench:batch                      (100,000 codes per form)
//   BENCH_CODES=1000000 pnpm bench:batch  (the million)
import { inFlight, memoryText, perBatch, runBatches } from './batch-load.ts';
import { machineLine, type RunningProduct, startDistributedProduct, startEmbeddedProduct } from './support.ts';

const total = Number(process.env.BENCH_CODES ?? 100_000);

async function row(start: () => Promise<RunningProduct>, form: string): Promise<string> {
  const run = await runBatches(start, total);
  return `| ${form} | ${run.codes.toLocaleString('en')} | ${run.seconds.toFixed(1)} s | ${run.codesPerSecond}/s | ${run.failed} | ${memoryText(run)} |`;
}

const forms = (process.env.BENCH_FORMS ?? 'embedded,distributed').split(',');
const rows = [
  ...(forms.includes('embedded') ? [await row(startEmbeddedProduct, 'embedded (PGlite)')] : []),
  ...(forms.includes('distributed') ? [await row(startDistributedProduct, 'distributed (PostgreSQL, NATS)')] : []),
];
process.stdout.write(
  [
    `Batch generation, ${machineLine()}, ${perBatch.toLocaleString('en')} items per request, ${inFlight} requests in flight`,
    '',
    '| form | codes | time | codes/s | failed | memory of each server process: after the first batch → half way → at the end |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n'),
);
