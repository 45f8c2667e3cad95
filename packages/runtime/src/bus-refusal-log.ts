import type { RefusedRequestListener } from '@hallmark/bus';
import type { Logger } from './logger.ts';

/**
 * A warning for each request refused for its signature, at most 10 a second (a flood of forged
 * requests must not flood the log); the next line says how many were left out.
 */
export function refusalLogger(log: Logger, now: () => number = Date.now): RefusedRequestListener {
  let windowStart = 0;
  let lines = 0;
  let omitted = 0;
  return (refusal) => {
    const time = now();
    if (time - windowStart >= 1_000) {
      windowStart = time;
      lines = 0;
    }
    if (lines >= 10) {
      omitted++;
      return;
    }
    lines++;
    log.warn({ ...refusal, ...(omitted > 0 ? { omitted } : {}) }, 'refused a bus request without a valid signature');
    omitted = 0;
  };
}
