/**
 * When a call is tried again, and after how long. Pure, so the rules are tested without a clock.
 *
 * Retried: no answer (a refused or reset connection, a timed-out attempt), 408, 429, every 5xx, and a
 * 409 only when it is the API saying that the first attempt with the same Idempotency-Key is still
 * running (a 409 with Retry-After on a request that carried the key): any other 409 (a duplicate
 * serial, a key already registered) is an answer, and trying again would not change it.
 */

/** The first retry waits about this long; each next one twice as long, up to `maxDelayMs`. */
export const initialDelayMs = 500;
export const maxDelayMs = 8_000;
/** A Retry-After longer than this (a daily quota spent until midnight) is not waited for: the error is thrown. */
export const maxRetryAfterMs = 60_000;

export function isRetryableStatus(status: number, headers: Headers, sentIdempotencyKey: boolean): boolean {
  if (status === 408 || status === 429 || status >= 500) return true;
  return status === 409 && sentIdempotencyKey && headers.has('retry-after');
}

/**
 * Milliseconds the answer's `Retry-After` (seconds or an HTTP date) or `retry-after-ms` asks for;
 * undefined when it asks for nothing readable.
 */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const milliseconds = headers.get('retry-after-ms');
  if (milliseconds !== null && milliseconds.trim() !== '' && Number.isFinite(Number(milliseconds))) {
    return Math.max(0, Number(milliseconds));
  }
  const value = headers.get('retry-after');
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * How long to wait before retry number `retry` (1 for the first): what Retry-After asks when it asks
 * for something up to `maxRetryAfterMs`, else exponential backoff with jitter (the full step less up to
 * a quarter at random), so many clients that failed together do not come back together.
 */
export function retryDelayMs(retry: number, headers: Headers | undefined, random: () => number = Math.random): number {
  const asked = retryAfterMs(headers);
  if (asked !== undefined && asked <= maxRetryAfterMs) return asked;
  const step = Math.min(initialDelayMs * 2 ** (retry - 1), maxDelayMs);
  return step * (1 - random() * 0.25);
}

/** True when the answer asks for a wait longer than the SDK waits: the call fails at once instead. */
export function asksTooLongAWait(headers: Headers): boolean {
  const asked = retryAfterMs(headers);
  return asked !== undefined && asked > maxRetryAfterMs;
}
