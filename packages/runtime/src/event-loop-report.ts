import { writeFileSync } from 'node:fs';
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

/** What `HALLMARK_REPORT_EVENT_LOOP` writes: the event loop's delays since the last report, in milliseconds. */
export interface EventLoopReport {
  pid: number;
  samples: number;
  meanMs: number;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
  /** Garbage collections in the window: how many, their longest pause, and the major ones (mark-compact). */
  gcCount: number;
  gcMaxMs: number;
  majorGcCount: number;
  majorGcMaxMs: number;
}

/**
 * For benchmarks: with HALLMARK_REPORT_EVENT_LOOP=<file> (`{pid}` in it is this process's id), this process samples its event loop's
 * delay (perf_hooks.monitorEventLoopDelay every 10 ms; a delay is how late that timer ran, so a stall shows as its length) and, on
 * each SIGUSR2, writes what it saw since the previous SIGUSR2 to that file as JSON and starts over.
 * A benchmark sends one signal before its load (to start a clean window) and one after, then reads
 * the file, with the garbage collections of the window (their pauses). Without the setting nothing
 * is sampled and SIGUSR2 keeps Node's default.
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
  const gc = { count: 0, maxMs: 0, majorCount: 0, majorMaxMs: 0 };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gc.count += 1;
      gc.maxMs = Math.max(gc.maxMs, entry.duration);
      if ((entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
        gc.majorCount += 1;
        gc.majorMaxMs = Math.max(gc.majorMaxMs, entry.duration);
      }
    }
  }).observe({ entryTypes: ['gc'] });
  process.on('SIGUSR2', () => {
    const report: EventLoopReport = {
      pid: process.pid,
      samples: histogram.count,
      meanMs: ms(histogram.mean),
      p50Ms: ms(histogram.percentile(50)),
      p99Ms: ms(histogram.percentile(99)),
      p999Ms: ms(histogram.percentile(99.9)),
      maxMs: ms(histogram.max),
      gcCount: gc.count,
      gcMaxMs: Math.round(gc.maxMs * 100) / 100,
      majorGcCount: gc.majorCount,
      majorGcMaxMs: Math.round(gc.majorMaxMs * 100) / 100,
    };
    histogram.reset();
    Object.assign(gc, { count: 0, maxMs: 0, majorCount: 0, majorMaxMs: 0 });
    writeFileSync(file, `${JSON.stringify(report)}\n`);
  });
}
