// Baseline: a ping through gateway → bus → code-service → back, at 50 connections, in the embedded
// form (one process, in-process bus) and the distributed form (five processes over NATS).
// The servers run in child processes; this process only generates load.
//
//   pnpm bench:ping            (needs PostgreSQL, Redis and NATS for the distributed form)
import { machineLine, measure, type RunningProduct, startDistributedProduct, startEmbeddedProduct } from './support.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);

async function pingLoad(start: () => Promise<RunningProduct>, form: string): Promise<string> {
  const product = await start();
  try {
    const load = {
      url: `${product.url}/api/v1/system/ping/code-service`,
      method: 'POST' as const,
      headers: { 'content-type': 'application/json' },
      body: '{}',
    };
    await measure({ ...load, seconds: 2 }); // warm-up
    const result = await measure({ ...load, seconds });
    return `| ${form} | ${result.requestsPerSecond} | ${result.p50} | ${result.p99} | ${result.errors} |`;
  } finally {
    await product.stop();
  }
}

// A keyless ping is limited per client address (10 a second by default); the load comes from one.
const unlimited = { HALLMARK_PUBLIC_RATE_LIMIT: '100000' };
const rows = [
  await pingLoad(() => startEmbeddedProduct(unlimited), 'embedded (1 process, in-process bus)'),
  await pingLoad(() => startDistributedProduct(unlimited), 'distributed (gateway + 4 services over NATS)'),
];
process.stdout.write(
  [
    `Ping baseline, ${machineLine()}, 50 connections, ${seconds} s after a 2 s warm-up`,
    '',
    '| form | requests/s | p50 ms | p99 ms | errors |',
    '|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n'),
);
