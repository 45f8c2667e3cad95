import type { RefusedRequestListener } from '@hallmark/bus';
import type { Logger } from './logger.ts';

const messages = {
  request: 'refused a bus request without a valid signature',
  reply: 'dropped a bus reply without a valid signature',
  event: 'dropped a bus event without a valid signature',
  broadcast: 'dropped a bus broadcast without a valid signature',
} as const;

/**
 * A warning for each request refused, and each reply, event or broadcast dropped, for its signature, at most
 * 10 a second (a flood of forged messages must not flood the log); the next line says how many
 * were left out.
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
    const { kind, ...fields } = refusal;
    log.warn({ ...fields, ...(kind === 'request' ? {} : { kind }), ...(omitted > 0 ? { omitted } : {}) }, messages[kind]);
    omitted = 0;
  };
}
