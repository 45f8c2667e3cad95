// Preloaded into a product process by `pnpm bench:scans` (NODE_OPTIONS=--import <this file>): with
// HALLMARK_BENCH_MEMORY_FILE=<file> ({pid} in it is replaced by the process id), appends the
// process's memory (process.memoryUsage(): rss, heapUsed, heapTotal, external, in bytes) as one
// JSON line every 100 ms with the wall-clock time, and once more after each major (mark-compact)
// garbage collection, marked `afterMajorGc`: the heap then is what is alive, garbage not counted.
// The main thread only (not worker threads).
import { appendFileSync } from 'node:fs';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

const setting = process.env.HALLMARK_BENCH_MEMORY_FILE;
if (setting && isMainThread) {
  const file = setting.replaceAll('{pid}', String(process.pid));
  const sample = (afterMajorGc) => {
    const usage = process.memoryUsage();
    const line = { at: Date.now(), rss: usage.rss, heapUsed: usage.heapUsed, heapTotal: usage.heapTotal, external: usage.external };
    appendFileSync(file, `${JSON.stringify(afterMajorGc ? { ...line, afterMajorGc } : line)}\n`);
  };
  setInterval(() => sample(false), 100).unref();
  new PerformanceObserver((list) => {
    if (list.getEntries().some((entry) => entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)) sample(true);
  }).observe({ entryTypes: ['gc'] });
}
