// Verification (issue #19, targets 1 and 4): POST /code/verify at 50 connections in the embedded
// and the distributed form, against the ceiling measured in the same run just before each form:
// raw Ed25519 verifications per second of one process verifying on every core (one worker thread
// per core, node:crypto, cached KeyObject, nothing else to do; bench/ceilings.ts).
// Targets: embedded ≥ 60% of that ceiling; distributed ≥ 40% with p99 under 25 ms (autocannon,
// closed loop, 50 connections, full speed). Target 4: no event-loop stall over 20 ms in the
// embedded process under this load: every server process samples its event loop
// (HALLMARK_REPORT_EVENT_LOOP, perf_hooks.monitorEventLoopDelay) over the measured seconds only.
//
// Each form is also held at half its full-speed rate (evenly paced, bench/support.ts measurePaced),
// where the event loop's delay shows stalls rather than the queue of a saturated server.
//
//   pnpm bench:verify                                  (both forms, about two minutes)
//   BENCH_FORMS=embedded BENCH_SECONDS=20 pnpm bench:verify
//   BENCH_EMBEDDED_ENV='{"UV_THREADPOOL_SIZE":"4"}' pnpm bench:verify   (settings for the embedded process)
//   BENCH_DISTRIBUTED_ENV='{"NODE_OPTIONS":"…"}' pnpm bench:verify       (settings for every distributed process)
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventLoopReport } from '@hallmark/runtime';
import { ed25519Ceiling, percent } from './ceilings.ts';
import {
  brandWithCode,
  cpuMicroseconds,
  eventLoopCpuMicroseconds,
  machineLine,
  measure,
  measurePaced,
  type RunningProduct,
  startDistributedProduct,
  startEmbeddedProduct,
  untilQuiet,
} from './support.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const forms = (process.env.BENCH_FORMS ?? 'embedded,distributed').split(',');
const embeddedEnv = JSON.parse(process.env.BENCH_EMBEDDED_ENV ?? '{}') as Record<string, string>;
const distributedEnv = JSON.parse(process.env.BENCH_DISTRIBUTED_ENV ?? '{}') as Record<string, string>;

/** Asks every process for its event-loop report (SIGUSR2) and reads them; each starts a new window. */
async function eventLoopReports(
  product: RunningProduct,
  folder: string,
): Promise<Array<{ name: string; report: EventLoopReport }>> {
  const reports = [];
  for (const { name, pid } of product.processes) {
    const file = join(folder, `${pid}.json`);
    await rm(file, { force: true });
    process.kill(pid, 'SIGUSR2');
    const deadline = Date.now() + 5_000;
    for (;;) {
      const text = await readFile(file, 'utf8').catch(() => '');
      if (text.endsWith('\n')) {
        reports.push({ name, report: JSON.parse(text) as EventLoopReport });
        break;
      }
      if (Date.now() > deadline) throw new Error(`${name} wrote no event-loop report`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  return reports;
}

interface FormResult {
  form: string;
  ceiling: { perSecond: number; threads: number; runs: number[] };
  rate: number;
  p50: number;
  p99: number;
  errors: number;
  /** Server CPU per verification: the whole process, and its event loop's thread alone. */
  cpuMicros: Array<{ name: string; micros: number; loopMicros: number }>;
  loops: Array<{ name: string; report: EventLoopReport }>;
  /** Held at half the full-speed rate, evenly paced: latency and event-loop delay below saturation. */
  paced: { rate: number; p50: number; p99: number; errors: number; loops: Array<{ name: string; report: EventLoopReport }> };
}

async function verifyLoad(form: 'embedded' | 'distributed'): Promise<FormResult> {
  const folder = await mkdtemp(join(tmpdir(), 'hallmark-loop-'));
  // Each process writes its report to <folder>/<its pid>.json.
  const reportEnv = { HALLMARK_REPORT_EVENT_LOOP: join(folder, '{pid}.json') };
  const product =
    form === 'embedded'
      ? await startEmbeddedProduct({ ...reportEnv, ...embeddedEnv })
      : await startDistributedProduct({}, { ...reportEnv, ...distributedEnv });
  try {
    const { key, url } = await brandWithCode(product);
    const verify = {
      url: `${product.url}/api/v1/code/verify`,
      method: 'POST' as const,
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ url }),
    };
    await measure({ ...verify, seconds: 3 });
    await untilQuiet([product]);
    const before = await ed25519Ceiling();
    await eventLoopReports(product, folder);
    const cpuBefore = product.processes.map(({ pid }) => cpuMicroseconds(pid));
    const loopCpuBefore = product.processes.map(({ pid }) => eventLoopCpuMicroseconds(pid));
    const result = await measure({ ...verify, seconds });
    const loops = await eventLoopReports(product, folder);
    const cpuAfter = product.processes.map(({ pid }) => cpuMicroseconds(pid));
    const loopCpuAfter = product.processes.map(({ pid }) => eventLoopCpuMicroseconds(pid));
    await untilQuiet([product]);
    // At full speed the loop is never idle (50 requests always wait), so its delay is mostly
    // queueing; held at half that rate, what remains are stalls.
    const pacedRate = Math.max(1, Math.round(result.requestsPerSecond / 2));
    await eventLoopReports(product, folder);
    const held = await measurePaced({ ...verify, rate: pacedRate, seconds });
    const pacedLoops = await eventLoopReports(product, folder);
    await untilQuiet([product]);
    // The ceiling just before and just after the load, averaged: the machine's speed drifts.
    const after = await ed25519Ceiling();
    const ceiling = {
      perSecond: Math.round((before.perSecond + after.perSecond) / 2),
      threads: before.threads,
      runs: [before.perSecond, after.perSecond],
    };
    const requests = result.requestsPerSecond * seconds;
    return {
      form,
      ceiling,
      rate: result.requestsPerSecond,
      p50: result.p50,
      p99: result.p99,
      errors: result.errors,
      cpuMicros: product.processes.map(({ name }, index) => ({
        name,
        micros: Math.round(((cpuAfter[index] ?? 0) - (cpuBefore[index] ?? 0)) / Math.max(1, requests)),
        loopMicros: Math.round(((loopCpuAfter[index] ?? 0) - (loopCpuBefore[index] ?? 0)) / Math.max(1, requests)),
      })),
      loops,
      paced: { rate: pacedRate, p50: held.p50, p99: held.p99, errors: held.errors, loops: pacedLoops },
    };
  } finally {
    await product.stop();
    await rm(folder, { recursive: true, force: true });
  }
}

const results: FormResult[] = [];
for (const form of forms) results.push(await verifyLoad(form as 'embedded' | 'distributed'));
const target = { embedded: 0.6, distributed: 0.4 } as Record<string, number>;
process.stdout.write(
  [
    `Verification, ${machineLine()}, 50 connections, ${seconds} s after a 3 s warm-up (autocannon, closed loop)`,
    'Ceiling: raw Ed25519 verifications/s of one process with one worker thread per core verifying at once (node:crypto, cached KeyObject), the mean of a run just before and just after the load',
    '',
    "| form | verifies/s | ceiling | ratio (target) | p50 ms | p99 ms | errors | server CPU µs per verify (of it, the event loop's thread) |",
    '|---|---|---|---|---|---|---|---|',
    ...results.map(
      (r) =>
        `| ${r.form} | ${r.rate} | ${r.ceiling.perSecond}/s (${r.ceiling.threads} threads; before, after: ${r.ceiling.runs.join(', ')}) | ${percent(r.rate, r.ceiling.perSecond)} (≥ ${(target[r.form] ?? 0) * 100}%${r.form === 'distributed' ? ', p99 < 25 ms' : ''}) | ${r.p50} | ${r.p99} | ${r.errors} | ${r.cpuMicros.map((c) => `${c.name} ${c.micros} (${c.loopMicros})`).join(', ')} |`,
    ),
    '',
    'Held at half the full-speed rate, evenly paced over 50 connections, latency from when each request was due (no coordinated omission)',
    '',
    '| form | rate | p50 ms | p99 ms | errors |',
    '|---|---|---|---|---|',
    ...results.map((r) => `| ${r.form} | ${r.paced.rate}/s | ${r.paced.p50} | ${r.paced.p99} | ${r.paced.errors} |`),
    '',
    'Event-loop delay of each server process over the measured seconds, at full speed and held at half (monitorEventLoopDelay: how late a 10 ms timer ran, ms; target 4: embedded max ≤ 20 ms)',
    '',
    '| form | process | load | p50 | p99 | p99.9 | max | GCs (longest pause) | major GCs (longest) |',
    '|---|---|---|---|---|---|---|---|---|',
    ...results.flatMap((r) =>
      [
        ['full speed', r.loops],
        [`${r.paced.rate}/s`, r.paced.loops],
      ].flatMap(([load, loops]) =>
        (loops as FormResult['loops']).map(
          ({ name, report }) =>
            `| ${r.form} | ${name} | ${load} | ${report.p50Ms} | ${report.p99Ms} | ${report.p999Ms} | ${report.maxMs} | ${report.gcCount} (${report.gcMaxMs}) | ${report.majorGcCount} (${report.majorGcMaxMs}) |`,
        ),
      ),
    ),
    '',
  ].join('\n'),
);
