import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

/** What `HALLMARK_REPORT_EVENT_LOOP` writes: the event loop's delays since the last report, in milliseconds. */
export interface EventLoopReport {
  pid: number;
  samples: number;
  meanMs: number;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
}

/**
 * For benchmarks: with HALLMARK_REPORT_EVENT_LOOP=<file> (`{pid}` in it is this process's id), this process samples its event loop's
 * delay (perf_hooks.monitorEventLoopDelay every 10 ms; a delay is how late that timer ran, so a stall shows as its length) and, on
 * each SIGUSR2, writes what it saw since the previous SIGUSR2 to that file as JSON and starts over.
 * A benchmark sends one signal before its load (to start a clean window) and one after, then reads
 * the file. Without the setting nothing is sampled and SIGUSR2 keeps Node's default.
 */
export function reportEventLoopOnSignal(env: NodeJS.ProcessEnv = process.env): void {
  const setting = env.HALLMARK_REPORT_EVENT_LOOP;
  if (!setting) return;
  const file = setting.replaceAll('{pid}', String(process.pid));
  const resolutionMs = 10;
  const histogram = monitorEventLoopDelay({ resolution: resolutionMs });
  histogram.enable();
  // Node records the time between its timer's runs, the resolution included: a free loop reads 10 ms.
  const ms = (nanoseconds: number) => Math.max(0, Math.round(nanoseconds / 10_000 - resolutionMs * 100) / 100);
  process.on('SIGUSR2', () => {
    const report: EventLoopReport = {
      pid: process.pid,
      samples: histogram.count,
      meanMs: ms(histogram.mean),
      p50Ms: ms(histogram.percentile(50)),
      p99Ms: ms(histogram.percentile(99)),
      p999Ms: ms(histogram.percentile(99.9)),
      maxMs: ms(histogram.max),
    };
    histogram.reset();
    writeFileSync(file, `${JSON.stringify(report)}\n`);
  });
}
