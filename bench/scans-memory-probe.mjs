// Preloaded into a product process by `pnpm bench:scans` (NODE_OPTIONS=--import <this file>): with
// HALLMARK_BENCH_MEMORY_FILE=<file> ({pid} in it is replaced by the process id), appends the
// process's memory (process.memoryUsage(): rss, heapUsed, heapTotal, external, arrayBuffers, bytes)
// as one JSON line every 100 ms, with the wall-clock time. The main thread only (not worker threads).
import { appendFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

const setting = process.env.HALLMARK_BENCH_MEMORY_FILE;
if (setting && isMainThread) {
  const file = setting.replaceAll('{pid}', String(process.pid));
  const timer = setInterval(() => {
    const usage = process.memoryUsage();
    appendFileSync(
      file,
      `${JSON.stringify({ at: Date.now(), rss: usage.rss, heapUsed: usage.heapUsed, heapTotal: usage.heapTotal, external: usage.external })}\n`,
    );
  }, 100);
  timer.unref();
}
