// Codes, issue #4 targets, in one run on this machine:
// (a) raw node:crypto Ed25519 verifications per second on one core (cached KeyObject);
// (b) POST /code/verify through the gateway, embedded form, 50 connections;
// (c) the same in the distributed form (NATS, Redis, PostgreSQL);
// (d) POST /code/generate, one code per request, and POST /code/generate/batch: 100,000 codes in
//     the embedded form and a million in the distributed form, with every server process's memory.
// Targets: (b) ≥ 50% of (a); (c) ≥ 30% of (a) with p99 under 25 ms at 50 connections; (d) at
// least 10,000 codes/s and a million codes in under two minutes with flat memory.
// The embedded form is measured as `pnpm start` runs it, and again with UV_THREADPOOL_SIZE set to
// the machine's cores (README, Configuration: fewer pool threads than libuv's 4 on a small machine).
// Each form is measured twice: at full speed (autocannon, 50 connections, as many requests as it
// answers: its throughput, with the latency of a saturated server, which is 50 / throughput by
// Little's law) and held at its target rate (50% or 30% of a, evenly paced over up to 50
// connections, measurePaced), where the p99 says how fast requests are answered under that load.
//
//   pnpm bench:codes                        (about four minutes)
//   BENCH_MILLION=100000 pnpm bench:codes   (fewer codes in the distributed batch run)
import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import {
  ed25519PrivateKeyObject,
  ed25519PublicKeyObject,
  generateEd25519KeyPair,
  signEd25519,
  verifyEd25519,
} from '@hallmark/crypto';
import autocannon from 'autocannon';
import { type BatchRun, memoryText, runBatches } from './batch-load.ts';
import {
  machineLine,
  measure,
  measurePaced,
  operatorKey,
  type RunningProduct,
  startDistributedProduct,
  startEmbeddedProduct,
} from './support.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const millionCodes = Number(process.env.BENCH_MILLION ?? 1_000_000);
const gtin = '09506000134352';

function rawVerifiesPerSecond(): number {
  const pair = generateEd25519KeyPair();
  const publicKey = ed25519PublicKeyObject(pair.publicKey);
  const message = Buffer.alloc(300, 7);
  const signature = signEd25519(ed25519PrivateKeyObject(pair), message);
  for (let i = 0; i < 2_000; i++) verifyEd25519(publicKey, message, signature);
  const started = performance.now();
  let count = 0;
  while (performance.now() - started < 3_000) {
    verifyEd25519(publicKey, message, signature);
    count++;
  }
  return Math.round(count / ((performance.now() - started) / 1000));
}

async function post(url: string, path: string, key: string, body: unknown) {
  const response = await fetch(`${url}/api/v1${path}`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
  return (await response.json()) as Record<string, any>;
}

async function codeLoad(
  start: () => Promise<RunningProduct>,
  form: string,
  raw: number,
  { generate = true }: { generate?: boolean } = {},
): Promise<string[]> {
  const product = await start();
  try {
    const brand = await post(product.url, '/accounts', operatorKey, { name: 'Bench brand', tier: 'enterprise' });
    const key = brand.apiKey.secret as string;
    // The brand signs only GTINs it owns (docs/SIGNING.md).
    await post(product.url, `/accounts/${brand.account.id}/gtins`, operatorKey, { gtin });
    const code = await post(product.url, '/code/generate', key, { gtin, serialNumber: 'BENCH-1', batchNumber: 'L1' });
    const verify = {
      url: `${product.url}/api/v1/code/verify`,
      method: 'POST' as const,
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ url: code.url }),
    };
    await measure({ ...verify, seconds: 3 });
    const result = await measure({ ...verify, seconds });
    const targetShare = form.startsWith('embedded') ? 0.5 : 0.3;
    const targetRate = Math.round(raw * targetShare);
    const held = await measurePaced({ ...verify, seconds, rate: targetRate });
    const share = (rate: number) => `${((rate / raw) * 100).toFixed(0)}% of a`;
    const label = `(${form.startsWith('embedded') ? 'b' : 'c'}) POST /code/verify, ${form}`;
    const verifyRows = [
      `| ${label}, full speed | ${result.requestsPerSecond}/s (${share(result.requestsPerSecond)}) | ${result.p50} | ${result.p99} | ${result.errors} |`,
      `| ${label}, held at ${targetShare * 100}% of a (${targetRate}/s) | ${held.requestsPerSecond}/s (${share(held.requestsPerSecond)}) | ${held.p50} | ${held.p99} | ${held.errors} |`,
    ];
    if (!generate) return verifyRows;
    let serial = 0;
    const generated = await autocannon({
      url: `${product.url}/api/v1/code/generate`,
      method: 'POST',
      connections: 20,
      duration: Math.min(seconds, 6),
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      requests: [
        {
          setupRequest: (request) => ({
            ...request,
            body: JSON.stringify({ gtin, serialNumber: `G-${randomUUID().slice(0, 8)}-${serial++}` }),
          }),
        },
      ],
    });
    return [
      ...verifyRows,
      `| (d) POST /code/generate, ${form}, 20 connections | ${Math.round(generated.requests.average)}/s | ${generated.latency.p50} | ${generated.latency.p99} | ${generated.errors + generated.non2xx} |`,
    ];
  } finally {
    await product.stop();
  }
}

const batchRow = (form: string, run: BatchRun) =>
  `| (d) POST /code/generate/batch, ${form}, ${run.codes.toLocaleString('en')} codes | ${run.codesPerSecond}/s (${run.seconds.toFixed(1)} s in all) | | | ${run.failed} |`;

const raw = rawVerifiesPerSecond();
const cores = String(availableParallelism());
const rows = [
  ...(await codeLoad(startEmbeddedProduct, 'embedded', raw)),
  ...(await codeLoad(() => startEmbeddedProduct({ UV_THREADPOOL_SIZE: cores }), `embedded, UV_THREADPOOL_SIZE=${cores}`, raw, {
    generate: false,
  })),
  ...(await codeLoad(startDistributedProduct, 'distributed', raw)),
];
const embeddedBatch = await runBatches(startEmbeddedProduct, 100_000);
const distributedBatch = await runBatches(startDistributedProduct, millionCodes);
process.stdout.write(
  [
    `Codes, ${machineLine()}, 50 connections, ${seconds} s after a 3 s warm-up; batches of 10,000 items, 2 in flight`,
    '',
    '| measurement | rate | p50 ms | p99 ms | errors |',
    '|---|---|---|---|---|',
    `| (a) Ed25519 verify, node:crypto, cached KeyObject, one core | ${raw}/s | | | |`,
    ...rows,
    batchRow('embedded', embeddedBatch),
    batchRow('distributed', distributedBatch),
    '',
    `Memory during the batches (after the first → half way → at the end): embedded: ${memoryText(embeddedBatch)}. Distributed: ${memoryText(distributedBatch)}.`,
    '',
  ].join('\n'),
);
