// The SDK's overhead on the verify hot path (issue #22, item 5; target under 5% at 50 concurrent
// calls): `hallmark.codes.verify({ url })` against the same POST /code/verify made with a bare
// fetch, 50 calls in flight each way, against the embedded product in its own process.
//
// A third way, the bare fetch with the SDK's per-attempt timeout (an AbortSignal), tells what part
// of the overhead is the timeout itself. The ways are measured in rotating rounds so that whatever
// else the machine does falls on all alike, and the report is of ratios: calls per second (SDK / raw),
// latency, and the client's own CPU time per call (what the SDK adds in this process: building the
// request, the retry loop, the timeout, parsing). Absolute numbers on a shared machine mean little.
// The product runs on CPU 1 and the client on CPU 0 (taskset), as a client on a machine of its own
// would: the SDK's own CPU then costs the server nothing, and shows in the client CPU per call.
//
//   pnpm bench:sdk                          (6 rounds of 5 s each of three ways, about two minutes)
//   BENCH_ROUNDS=10 BENCH_SECONDS=3 pnpm bench:sdk
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
  const hallmark = new Hallmark({ apiKey: key, baseUrl: product.url });
  const sdk = async () => {
    const answer = await hallmark.codes.verify({ url });
    if (answer.verdict !== 'AUTHENTIC') throw new Error('sdk: not authentic');
  };

  // Warm both paths (JIT, connections, the product's caches) before measuring.
  await closedLoop(raw, 2);
  await closedLoop(sdk, 2);
  await closedLoop(rawWithTimeout, 2);
  const rawRounds: Round[] = [];
  const sdkRounds: Round[] = [];
  const timedRounds: Round[] = [];
  const arms = [
    { once: raw, rounds: rawRounds },
    { once: sdk, rounds: sdkRounds },
    { once: rawWithTimeout, rounds: timedRounds },
  ];
  for (let round = 0; round < rounds; round++) {
    // Rotate which goes first, so a trend in the machine's load does not favour one.
    for (let i = 0; i < arms.length; i++) {
      const arm = arms[(round + i) % arms.length] as (typeof arms)[number];
      arm.rounds.push(await closedLoop(arm.once, secondsPerRound));
    }
  }
  const r = summary(rawRounds);
  const s = summary(sdkRounds);
  const t = summary(timedRounds);
  const perRoundRatios = rawRounds.map((round, index) => {
    const other = sdkRounds[index] as Round;
    return other.calls / other.seconds / (round.calls / round.seconds);
  });
  const line = (name: string, x: ReturnType<typeof summary>) =>
    `${name.padEnd(10)} ${x.perSecond.toFixed(0).padStart(6)} calls/s  p50 ${x.p50.toFixed(1).padStart(6)} ms  p99 ${x.p99
      .toFixed(1)
      .padStart(6)} ms  client CPU ${x.cpuMicrosPerCall.toFixed(0).padStart(5)} µs/call  errors ${x.errors}  (${x.calls} calls)`;
  console.log(machineLine());
  console.log(
    `verify through the SDK vs a raw fetch: ${concurrency} concurrent, ${rounds} rounds of ${secondsPerRound} s each way`,
  );
  console.log(line('raw fetch', r));
  console.log(line('SDK', s));
  console.log(line('raw+timer', t));
  const overhead = (1 - s.perSecond / r.perSecond) * 100;
  const sortedRatios = [...perRoundRatios].sort((a, b) => a - b);
  // The median of an even count is the mean of the two middle ratios (not the upper one, which would favour the SDK).
  const middle = sortedRatios.length / 2;
  const medianRatio =
    sortedRatios.length % 2 === 0
      ? ((sortedRatios[middle - 1] ?? 0) + (sortedRatios[middle] ?? 0)) / 2
      : (sortedRatios[Math.floor(middle)] ?? 0);
  console.log(
    `throughput SDK/raw ${(s.perSecond / r.perSecond).toFixed(3)} (overhead ${overhead.toFixed(1)}%; median of rounds ${medianRatio.toFixed(3)}; rounds ${perRoundRatios
      .map((ratio) => ratio.toFixed(2))
      .join(
        ' ',
      )}), p50 ratio ${(s.p50 / r.p50).toFixed(3)}, client CPU per call ratio ${(s.cpuMicrosPerCall / r.cpuMicrosPerCall).toFixed(3)} ` +
      `(+${(s.cpuMicrosPerCall - r.cpuMicrosPerCall).toFixed(0)} µs). Target: overhead under 5%.`,
  );
  console.log(
    `against a bare fetch with the same timeout (an AbortSignal): throughput SDK/raw+timer ${(s.perSecond / t.perSecond).toFixed(3)} ` +
      `(overhead ${((1 - s.perSecond / t.perSecond) * 100).toFixed(1)}%), client CPU per call ratio ${(s.cpuMicrosPerCall / t.cpuMicrosPerCall).toFixed(3)} ` +
      `(+${(s.cpuMicrosPerCall - t.cpuMicrosPerCall).toFixed(0)} µs); the timeout's signal alone: raw+timer/raw ${(t.perSecond / r.perSecond).toFixed(3)}.`,
  );
} finally {
  await product.stop();
}
