// The SDK's overhead on the verify hot path (issue #22, item 5; target under 5% at 50 concurrent
// calls): `hallmark.codes.verify({ url })` against the same POST /code/verify made with a bare
// fetch, 50 calls in flight each way, against the embedded product in its own process.
//
// Three more ways say where the difference comes from: the bare fetch with a timeout like the SDK's
// (an AbortSignal), a bare node:http request (what the SDK uses in Node), and the SDK over fetch (as
// in a browser) against that fetch with a timeout. The ways are measured in rotating rounds so that whatever
// else the machine does falls on all alike, and the report is of ratios: calls per second (SDK / raw),
// latency, and the client's own CPU time per call (what the SDK adds in this process: building the
// request, the retry loop, the timeout, parsing). Absolute numbers on a shared machine mean little.
// The product runs on CPU 1 and the client on CPU 0 (taskset), as a client on a machine of its own
// would: the SDK's own CPU then costs the server nothing, and shows in the client CPU per call.
//
//   pnpm bench:sdk                          (6 rounds of 5 s each of five ways, about three minutes)
//   BENCH_ROUNDS=10 BENCH_SECONDS=3 pnpm bench:sdk
import http from 'node:http';
import { Hallmark } from '@hallmark/sdk';
import { brandWithCode, machineLine, pinLoadGenerator, startEmbeddedProduct } from './support.ts';

const rounds = Number(process.env.BENCH_ROUNDS ?? 6);
const secondsPerRound = Number(process.env.BENCH_SECONDS ?? 5);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 50);
/** The product on CPU 1 and this process on CPU 0 (BENCH_PIN=0 to let them share): as a client on its own machine. */
const pinned = process.env.BENCH_PIN !== '0';

interface Round {
  calls: number;
  errors: number;
  seconds: number;
  cpuMicros: number;
  latencies: number[];
}

/** `concurrency` loops calling `once` back to back for `seconds`; counts, latencies and this process's CPU. */
async function closedLoop(once: () => Promise<unknown>, seconds: number): Promise<Round> {
  const latencies: number[] = [];
  let errors = 0;
  const deadline = performance.now() + seconds * 1000;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const at = performance.now();
        try {
          await once();
          latencies.push(performance.now() - at);
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  return { calls: latencies.length, errors, seconds: elapsed, cpuMicros: cpu.user + cpu.system, latencies };
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

function summary(results: Round[]) {
  const calls = results.reduce((sum, round) => sum + round.calls, 0);
  const seconds = results.reduce((sum, round) => sum + round.seconds, 0);
  const latencies = results.flatMap((round) => round.latencies).sort((a, b) => a - b);
  return {
    perSecond: calls / seconds,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    cpuMicrosPerCall: results.reduce((sum, round) => sum + round.cpuMicros, 0) / Math.max(1, calls),
    errors: results.reduce((sum, round) => sum + round.errors, 0),
    calls,
  };
}

if (pinned) pinLoadGenerator(0);
const product = await startEmbeddedProduct({}, pinned ? 1 : undefined);
try {
  const { key, url } = await brandWithCode(product);
  const verifyUrl = `${product.url}/api/v1/code/verify`;
  const body = JSON.stringify({ url });
  const raw = async () => {
    const response = await fetch(verifyUrl, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json', accept: 'application/json' },
      body,
    });
    const answer = (await response.json()) as { verdict?: string };
    if (!response.ok || answer.verdict !== 'AUTHENTIC') throw new Error(`raw: ${response.status}`);
  };
  // The same bare fetch with a timeout, as the SDK has on every attempt (60 s by default): in Node
  // 20's fetch (undici) an AbortSignal costs the client CPU a call, whoever passes it.
  const rawWithTimeout = async () => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), 60_000);
    try {
      const response = await fetch(verifyUrl, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json', accept: 'application/json' },
        body,
        signal: controller.signal,
      });
      const answer = (await response.json()) as { verdict?: string };
      if (!response.ok || answer.verdict !== 'AUTHENTIC') throw new Error(`raw with timeout: ${response.status}`);
    } finally {
      clearTimeout(timer);
    }
  };
  // The cheapest bare request Node has: node:http with a keep-alive agent, the answer parsed.
  const agent = new http.Agent({ keepAlive: true });
  const headers = {
    'x-api-key': key,
    'content-type': 'application/json',
    accept: 'application/json',
    'content-length': String(Buffer.byteLength(body)),
  };
  const rawHttp = () =>
    new Promise<void>((resolve, reject) => {
      const request = http.request(verifyUrl, { method: 'POST', headers, agent }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const answer = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { verdict?: string };
          if (response.statusCode !== 200 || answer.verdict !== 'AUTHENTIC')
            reject(new Error(`raw http: ${response.statusCode}`));
          else resolve();
        });
        response.on('error', reject);
      });
      request.on('error', reject);
      request.end(body);
    });
  const hallmark = new Hallmark({ apiKey: key, baseUrl: product.url });
  const sdk = async () => {
    const answer = await hallmark.codes.verify({ url });
    if (answer.verdict !== 'AUTHENTIC') throw new Error('sdk: not authentic');
  };
  // The SDK as a browser runs it: over fetch (given), with its per-attempt timeout signal.
  const hallmarkOverFetch = new Hallmark({ apiKey: key, baseUrl: product.url, fetch: (input, init) => fetch(input, init) });
  const sdkOverFetch = async () => {
    const answer = await hallmarkOverFetch.codes.verify({ url });
    if (answer.verdict !== 'AUTHENTIC') throw new Error('sdk over fetch: not authentic');
  };

  const arms = [
    { name: 'raw fetch', once: raw, rounds: [] as Round[] },
    { name: 'SDK', once: sdk, rounds: [] as Round[] },
    { name: 'raw+timer', once: rawWithTimeout, rounds: [] as Round[] },
    { name: 'raw http', once: rawHttp, rounds: [] as Round[] },
    { name: 'SDK/fetch', once: sdkOverFetch, rounds: [] as Round[] },
  ];
  // Warm every path (JIT, connections, the product's caches) before measuring.
  for (const arm of arms) await closedLoop(arm.once, 2);
  for (let round = 0; round < rounds; round++) {
    // Rotate which goes first, so a trend in the machine's load does not favour one.
    for (let i = 0; i < arms.length; i++) {
      const arm = arms[(round + i) % arms.length] as (typeof arms)[number];
      arm.rounds.push(await closedLoop(arm.once, secondsPerRound));
    }
  }
  const [r, s, t, h, f] = arms.map((arm) => summary(arm.rounds)) as [
    ReturnType<typeof summary>,
    ReturnType<typeof summary>,
    ReturnType<typeof summary>,
    ReturnType<typeof summary>,
    ReturnType<typeof summary>,
  ];
  const rawRounds = arms[0]?.rounds ?? [];
  const sdkRounds = arms[1]?.rounds ?? [];
  const perRoundRatios = rawRounds.map((round, index) => {
    const other = sdkRounds[index] as Round;
    return other.calls / other.seconds / (round.calls / round.seconds);
  });
  const line = (name: string, x: ReturnType<typeof summary>) =>
    `${name.padEnd(10)} ${x.perSecond.toFixed(0).padStart(6)} calls/s  p50 ${x.p50.toFixed(1).padStart(6)} ms  p99 ${x.p99
      .toFixed(1)
      .padStart(6)} ms  client CPU ${x.cpuMicrosPerCall.toFixed(0).padStart(5)} µs/call  errors ${x.errors}  (${x.calls} calls)`;
  const compare = (a: ReturnType<typeof summary>, b: ReturnType<typeof summary>) =>
    `throughput ${(a.perSecond / b.perSecond).toFixed(3)} (overhead ${((1 - a.perSecond / b.perSecond) * 100).toFixed(1)}%), ` +
    `client CPU per call ${(a.cpuMicrosPerCall / b.cpuMicrosPerCall).toFixed(3)} (${a.cpuMicrosPerCall >= b.cpuMicrosPerCall ? '+' : ''}${(
      a.cpuMicrosPerCall - b.cpuMicrosPerCall
    ).toFixed(0)} µs)`;
  console.log(machineLine());
  console.log(
    `verify through the SDK vs raw requests: ${concurrency} concurrent, ${rounds} rounds of ${secondsPerRound} s each way`,
  );
  for (const [index, arm] of arms.entries()) console.log(line(arm.name, [r, s, t, h, f][index] as ReturnType<typeof summary>));
  const sortedRatios = [...perRoundRatios].sort((a, b) => a - b);
  // The median of an even count is the mean of the two middle ratios (not the upper one, which would favour the SDK).
  const middle = sortedRatios.length / 2;
  const medianRatio =
    sortedRatios.length % 2 === 0
      ? ((sortedRatios[middle - 1] ?? 0) + (sortedRatios[middle] ?? 0)) / 2
      : (sortedRatios[Math.floor(middle)] ?? 0);
  console.log(
    `SDK vs raw fetch (the target, overhead under 5%): ${compare(s, r)}; median of rounds ${medianRatio.toFixed(3)} (rounds ${perRoundRatios
      .map((ratio) => ratio.toFixed(2))
      .join(' ')}), p50 ratio ${(s.p50 / r.p50).toFixed(3)}.`,
  );
  console.log(`SDK vs raw node:http (the SDK's own work above the cheapest bare request): ${compare(s, h)}.`);
  console.log(`SDK over fetch vs raw fetch with the same timeout (what a browser pays): ${compare(f, t)}.`);
  console.log(`the timeout's signal alone, raw+timer vs raw fetch: ${compare(t, r)}.`);
} finally {
  await product.stop();
}
