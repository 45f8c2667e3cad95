// Another tenant's single generates and verifications while one tenant runs batches (a noisy
// neighbour, 2026-12-07): tenant B makes one code at a time (POST /code/generate, 40 ms apart) and,
// beside it, verifies one of its codes at a time (POST /code/verify, 40 ms apart), for 8 s alone, then
// for 15 s while tenant A keeps two 10,000-item batches in flight, and prints B's latencies both
// times. It is what set the gateway's chunks in flight per batch in each form (routes/code.ts,
// batchChunksInFlightOf).
//
//   pnpm bench:neighbours                          (both forms, about two minutes)
//   BENCH_FORMS=distributed pnpm bench:neighbours
import {
  brandWithCode,
  machineLine,
  operatorKey,
  percentileOf,
  post,
  type RunningProduct,
  startDistributedProduct,
  startEmbeddedProduct,
} from './support.ts';

const victimGtin = '09506000134369';

/** `latencies` (ms) as the table prints them. */
function summaryOf(latencies: number[], what: string): string {
  latencies.sort((a, b) => a - b);
  const at = (p: number) => percentileOf(latencies, p);
  return `${latencies.length} ${what}, p50 ${at(0.5)} ms, p90 ${at(0.9)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms`;
}

/** Calls `request` one at a time, 40 ms apart, for `seconds`; its latencies (ms). */
async function oneAtATime(seconds: number, request: () => Promise<unknown>): Promise<number[]> {
  const latencies: number[] = [];
  const end = Date.now() + seconds * 1000;
  while (Date.now() < end) {
    const started = performance.now();
    await request();
    latencies.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 40));
  }
  return latencies;
}

interface Neighbours {
  idle: string;
  loaded: string;
  idleVerify: string;
  loadedVerify: string;
  batches: number;
}

async function neighbours(product: RunningProduct): Promise<Neighbours> {
  const noisy = await brandWithCode(product);
  const victim = await post(product.url, '/accounts', operatorKey, { name: 'Neighbour', tier: 'enterprise' });
  const victimKey = victim.apiKey.secret as string;
  await post(product.url, `/accounts/${victim.account.id}/gtins`, operatorKey, { gtin: victimGtin });
  const victimCode = await post(product.url, '/code/generate', victimKey, { gtin: victimGtin, serialNumber: 'N-VERIFIED' });
  let serial = 0;
  const generates = (seconds: number) =>
    oneAtATime(seconds, () =>
      post(product.url, '/code/generate', victimKey, { gtin: victimGtin, serialNumber: `N-${serial++}` }),
    );
  const verifies = (seconds: number) =>
    // The verdict turns SUSPICIOUS once the scans pile up (EXCESSIVE_SCANS): timed all the same.
    oneAtATime(seconds, () => post(product.url, '/code/verify', victimKey, { url: victimCode.url }));
  const [idleGenerates, idleVerifies] = await Promise.all([generates(8), verifies(8)]);
  let stop = false;
  let batches = 0;
  const batchesOf = async (worker: number) => {
    for (let round = 0; !stop; round++) {
      const items = Array.from({ length: 10_000 }, (_, i) => ({ gtin: noisy.gtin, serialNumber: `W${worker}-${round}-${i}` }));
      await post(product.url, '/code/generate/batch', noisy.key, { items });
      batches++;
    }
  };
  const load = Promise.all([batchesOf(1), batchesOf(2)]);
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const [loadedGenerates, loadedVerifies] = await Promise.all([generates(15), verifies(15)]);
  stop = true;
  await load;
  return {
    idle: summaryOf(idleGenerates, 'codes'),
    loaded: summaryOf(loadedGenerates, 'codes'),
    idleVerify: summaryOf(idleVerifies, 'verifications'),
    loadedVerify: summaryOf(loadedVerifies, 'verifications'),
    batches,
  };
}

const forms = (process.env.BENCH_FORMS ?? 'embedded,distributed').split(',');
console.log(`Another tenant's single generates beside two batches in flight, ${machineLine()}\n`);
console.log("| form | B's | alone | beside the batches | batches of 10,000 answered meanwhile |\n|---|---|---|---|---|");
for (const form of forms) {
  const product = form === 'embedded' ? await startEmbeddedProduct() : await startDistributedProduct({}, {});
  try {
    const { idle, loaded, idleVerify, loadedVerify, batches } = await neighbours(product);
    console.log(`| ${form} | generates | ${idle} | ${loaded} | ${batches} |`);
    console.log(`| ${form} | verifications | ${idleVerify} | ${loadedVerify} | |`);
  } finally {
    await product.stop();
  }
}
