// Webhooks (issue #21): from a suspicious scan to the first delivery attempt at a receiver, in
// each form. A brand's code is on the blocklist as withdrawn, so every verification of it is
// SUSPICIOUS and queues a scan.suspicious message; a loopback receiver notes when each arrives
// (matched by scan number). Scans are paced (BENCH_RATE a second for BENCH_SECONDS); the latency runs
// from when the verification was sent. Target: p99 under 1 s.
//
//   pnpm bench:webhooks            (BENCH_FORMS=embedded,distributed BENCH_RATE=20 BENCH_SECONDS=10)
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brandWithCode, machineLine, type RunningProduct, startDistributedProduct, startEmbeddedProduct } from './support.ts';

const rate = Number(process.env.BENCH_RATE ?? 20);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const forms = (process.env.BENCH_FORMS ?? 'embedded,distributed').split(',');
const webhookEnv = { HALLMARK_WEBHOOKS_ALLOW_PRIVATE: 'true', HALLMARK_LOG_LEVEL: 'warn' };

/** When each scan's message first arrived, by the code's scan number (one code, so each scan has its own). */
const arrivals = new Map<number, number>();
const receiver = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const at = performance.now();
    const body = JSON.parse(Buffer.concat(chunks).toString()) as { type: string; data: { scanNumber?: number } };
    const n = body.data.scanNumber;
    if (body.type === 'scan.suspicious' && n !== undefined && !arrivals.has(n)) arrivals.set(n, at);
    response.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

async function post(url: string, key: string, body: unknown) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: answers are read field by field
  const json = (await response.json()) as Record<string, any>;
  if (!response.ok) throw new Error(`${url}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;

async function run(form: string, product: RunningProduct): Promise<string> {
  try {
    const { key, gtin, url } = await brandWithCode(product);
    await post(`${product.url}/api/v1/webhooks/endpoints`, key, { url: hookUrl, eventTypes: ['scan.suspicious'] });
    await post(`${product.url}/api/v1/blocklist`, key, { gtin, serial: 'BENCH-1', kind: 'withdrawn', reason: 'bench' });
    arrivals.clear();
    const sent: Array<{ scanNumber: number; at: number }> = [];
    const total = rate * seconds;
    const start = performance.now();
    const inFlight: Promise<void>[] = [];
    for (let i = 0; i < total; i += 1) {
      const due = start + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const at = performance.now();
      inFlight.push(
        post(`${product.url}/api/v1/code/verify?view=quickstart`, key, { url }).then((result) => {
          if (result.verdict !== 'SUSPICIOUS') throw new Error(`verdict ${result.verdict}`);
          sent.push({ scanNumber: result.scanNumber as number, at });
        }),
      );
    }
    await Promise.all(inFlight);
    const deadline = performance.now() + 30_000;
    while (arrivals.size < sent.length && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const latencies = sent
      .filter((scan) => arrivals.has(scan.scanNumber))
      .map((scan) => (arrivals.get(scan.scanNumber) as number) - scan.at)
      .sort((a, b) => a - b);
    const missing = sent.length - latencies.length;
    return `| ${form} | ${sent.length} | ${missing} | ${percentile(latencies, 50).toFixed(0)} | ${percentile(latencies, 99).toFixed(0)} | ${(latencies.at(-1) ?? Number.NaN).toFixed(0)} |`;
  } finally {
    await product.stop();
  }
}

const rows: string[] = [];
for (const form of forms) {
  const product = form === 'embedded' ? await startEmbeddedProduct(webhookEnv) : await startDistributedProduct({}, webhookEnv);
  rows.push(await run(form, product));
}
receiver.close();
console.log(`\nScan to first webhook delivery attempt, ${rate} scans/s for ${seconds} s (${machineLine()})\n`);
console.log('| form | scans | not delivered | p50 ms | p99 ms | max ms |');
console.log('|---|---|---|---|---|---|');
for (const row of rows) console.log(row);
