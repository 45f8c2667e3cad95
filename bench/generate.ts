// One-at-a-time generation (issue #19, target 2): POST /code/generate, one code per request, 50
// connections, in the embedded and the distributed form, against the ceiling measured in the same
// run: one-row inserts per second the same database accepts from 50 concurrent clients
// (PostgreSQL: the product's own database, 50 connections; embedded: a PGlite of the same kind in
// this process; bench/ceilings.ts), taken just before and just after the load and averaged.
// Target: at least 25% of that ceiling with p99 under 50 ms. Every request has its own serial.
//
//   pnpm bench:generate
//   BENCH_FORMS=distributed BENCH_SECONDS=20 pnpm bench:generate
//   BENCH_EMBEDDED_ENV='{"HALLMARK_PGLITE_THREAD":"main"}' pnpm bench:generate   (settings for the embedded process)
//   BENCH_DISTRIBUTED_ENV='{"NODE_OPTIONS":"…"}' pnpm bench:generate              (settings for every distributed process)
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { percent, pgliteInsertCeiling, postgresInsertCeiling } from './ceilings.ts';
import {
  brandWithCode,
  cpuMicroseconds,
  eventLoopCpuMicroseconds,
  machineLine,
  type RunningProduct,
  startDistributedProduct,
  startEmbeddedProduct,
  untilQuiet,
} from './support.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const forms = (process.env.BENCH_FORMS ?? 'embedded,distributed').split(',');
const connections = 50;
const embeddedEnv = JSON.parse(process.env.BENCH_EMBEDDED_ENV ?? '{}') as Record<string, string>;
const distributedEnv = JSON.parse(process.env.BENCH_DISTRIBUTED_ENV ?? '{}') as Record<string, string>;

async function generateLoad(product: RunningProduct, key: string, gtin: string, duration: number) {
  const prefix = randomUUID().slice(0, 8);
  let serial = 0;
  const result = await autocannon({
    url: `${product.url}/api/v1/code/generate`,
    method: 'POST',
    connections,
    duration,
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    requests: [
      {
        setupRequest: (request) => ({
          ...request,
          body: JSON.stringify({ gtin, serialNumber: `G-${prefix}-${serial++}`, batchNumber: 'L1' }),
        }),
      },
    ],
  });
  return {
    rate: Math.round(result['2xx'] / duration),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
    requests: result.requests.total,
  };
}

interface Row {
  form: string;
  ceiling: number;
  ceilings: number[];
  rate: number;
  p50: number;
  p99: number;
  errors: number;
  cpu: string;
}

async function measureForm(form: 'embedded' | 'distributed'): Promise<Row> {
  const product =
    form === 'embedded' ? await startEmbeddedProduct(embeddedEnv) : await startDistributedProduct({}, distributedEnv);
  const ceilingOf = () =>
    form === 'embedded' ? pgliteInsertCeiling(connections) : postgresInsertCeiling(product.databaseUrl as string, connections);
  try {
    const { key, gtin } = await brandWithCode(product);
    await generateLoad(product, key, gtin, 3);
    await untilQuiet([product]);
    const before = await ceilingOf();
    const cpuBefore = product.processes.map(({ pid }) => cpuMicroseconds(pid));
    const loopCpuBefore = product.processes.map(({ pid }) => eventLoopCpuMicroseconds(pid));
    const load = await generateLoad(product, key, gtin, seconds);
    const perRequest = (micros: number) => Math.round(micros / Math.max(1, load.requests));
    const cpu = product.processes
      .map(
        ({ name, pid }, index) =>
          `${name} ${perRequest(cpuMicroseconds(pid) - (cpuBefore[index] ?? 0))} (${perRequest(eventLoopCpuMicroseconds(pid) - (loopCpuBefore[index] ?? 0))})`,
      )
      .join(', ');
    await untilQuiet([product]);
    const after = await ceilingOf();
    return {
      form,
      ceiling: Math.round((before + after) / 2),
      ceilings: [before, after],
      rate: load.rate,
      p50: load.p50,
      p99: load.p99,
      errors: load.errors,
      cpu,
    };
  } finally {
    await product.stop();
  }
}

const rows: Row[] = [];
for (const form of forms) rows.push(await measureForm(form as 'embedded' | 'distributed'));
process.stdout.write(
  [
    `One-at-a-time generation, ${machineLine()}, POST /code/generate, ${connections} connections, ${seconds} s after a 3 s warm-up (autocannon)`,
    `Ceiling: one-row inserts/s from ${connections} concurrent clients into the same database (distributed: its PostgreSQL; embedded: a PGlite of the same kind), the mean of a run just before and just after the load`,
    '',
    "| form | codes/s (201s) | ceiling: inserts/s | ratio (target ≥ 25%) | p50 ms | p99 ms (target < 50) | errors | server CPU µs per request (of it, the event loop's thread) |",
    '|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.form} | ${r.rate} | ${r.ceiling} (before, after: ${r.ceilings.join(', ')}) | ${percent(r.rate, r.ceiling)} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.cpu} |`,
    ),
    '',
  ].join('\n'),
);
