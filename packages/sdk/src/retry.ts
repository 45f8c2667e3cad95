/**
 * When a call is tried again, and after how long. Pure, so the rules are tested without a clock.
 *
 * A request that is safe to repeat (a GET, HEAD, PUT, DELETE or OPTIONS; a POST carrying an
 * Idempotency-Key its operation honours; `POST /code/verify`, whose repeat only records one more
 * scan) is retried on no answer (a refused or reset connection, a timed-out attempt), 408, 429,
 * every 5xx, and a 409 only when it is the API saying that the first attempt with the same
 * Idempotency-Key is still running (a 409 with Retry-After on a request that carried the key): any
 * other 409 (a duplicate serial, a key already registered) is an answer, and trying again would not
 * change it.
 *
 * Any other request (`blocklist.createFromCsv`, a webhook replay, a PATCH) is retried only when the
 * API certainly did not act on it: a connection that was never made (the request never left) and a
 * 429 (the rate limits refuse before anything is done). Not on a 5xx or a lost answer, which may
 * come after the work was done: a 503 with Retry-After is a busy refusal made before any work, but
 * also a store lost half-way through (services answer an outage 503 with Retry-After: 1), which
 * the client cannot tell apart.
 */

/** The first retry waits about this long; each next one twice as long, up to `maxDelayMs`. */
export const initialDelayMs = 500;
export const maxDelayMs = 8_000;
/** A Retry-After longer than this (a daily quota spent until midnight) is not waited for: the error is thrown. */
export const maxRetryAfterMs = 60_000;

/** Methods whose request, repeated, has the effect of one (RFC 9110, 9.2.2). */
const idempotentMethods = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

/**
 * Requests retried as if safe to repeat although they take no Idempotency-Key: a verify sent twice
 * records one more scan and answers the same verdict (docs/SDK.md, Retries and idempotency).
 */
const retriedWithoutKey = new Set(['POST /api/v1/code/verify']);

/**
 * True when sending the request again cannot do twice what it asks: an idempotent method, an
 * Idempotency-Key the operation honours (the API answers a retry with the first answer), or a verify.
 */
export function isSafeToRepeat(method: string, path: string, sendsHonouredKey: boolean): boolean {
  return idempotentMethods.has(method) || sendsHonouredKey || retriedWithoutKey.has(`${method} ${path}`);
}

export function isRetryableStatus(status: number, headers: Headers, sentIdempotencyKey: boolean, safeToRepeat: boolean): boolean {
  // Refused by the rate limits before anything was done: safe whatever the request.
  if (status === 429) return true;
  if (!safeToRepeat) return false;
  if (status === 408 || status >= 500) return true;
  return status === 409 && sentIdempotencyKey && headers.has('retry-after');
}

/** Delay-seconds as a number (signed, with a fraction or an exponent, as Python's float() reads it), or undefined. */
function seconds(text: string): number | undefined {
  const trimmed = text.trim();
  return /^[+-]?(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?$/i.test(trimmed) ? Number(trimmed) : undefined;
}

/**
 * Milliseconds the answer's `Retry-After` (seconds or an HTTP date) or `retry-after-ms` asks for;
 * undefined when it asks for nothing readable. As the Python client reads it: a negative number of
 * seconds is no wait (not a date), and of two values joined into one (`5, 5`, two header lines) the
 * first counts. A date's commas are its own, so a date is read whole.
 */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const milliseconds = headers.get('retry-after-ms');
  if (milliseconds !== null && milliseconds.trim() !== '' && Number.isFinite(Number(milliseconds))) {
    return Math.max(0, Number(milliseconds));
  }
  const value = headers.get('retry-after');
  if (value === null || value.trim() === '') return undefined;
  const asked = seconds(value) ?? seconds(value.split(',')[0] ?? '');
  if (asked !== undefined) return Math.max(0, asked) * 1000;
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
