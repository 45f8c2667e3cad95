// When the console sends a change again. Only a request with an Idempotency-Key is ever sent again,
// and with the same key: the API answers a retry of a request it already carried out with that
// first answer, so a retry never makes a second code. After a 5xx the API has let the key go (a
// failure keeps nothing) and runs the retry again, which finds what the first try made only where
// the service derives its ids from the key (codes; docs/API.md, Lost answers): elsewhere (keys,
// webhook endpoints, blocks) a 5xx is not sent again, as a second try could make a second one.

import type { ApiError } from './api.ts';

/** Tries in all, the first one included. */
export const maxTries = 4;
/** The longest the console waits before a retry; a longer Retry-After (a daily quota) is an answer, not a pause. */
export const longestWaitMs = 10_000;

/**
 * The API may have carried the request out although the console got no answer it could use: the
 * connection failed (status 0), or a 5xx came from the gateway or on the way (a service that timed
 * out may still commit).
 */
export const answerLost = (error: ApiError): boolean => error.status === 0 || error.status >= 500;

/**
 * How long to wait before sending a failed request again (its `tries` so far, ≥ 1), or undefined
 * when it is not to be sent again: a refusal (4xx) is the API's answer, except 409 while the first
 * attempt with the key still runs and 429 with a short Retry-After.
 */
export function retryDelayMs(error: ApiError, tries: number, { serverErrors = true }: RetryPolicy = {}): number | undefined {
  if (tries >= maxTries) return undefined;
  const backoff = 500 * 2 ** (tries - 1);
  const told = error.retryAfterSeconds === undefined ? undefined : error.retryAfterSeconds * 1_000;
  const transient =
    (serverErrors ? answerLost(error) : error.status === 0) ||
    (error.status === 409 && error.code === 'CONFLICT' && told !== undefined) ||
    (error.status === 429 && told !== undefined);
  if (!transient) return undefined;
  const wait = Math.max(backoff, told ?? 0);
  return wait <= longestWaitMs ? wait : undefined;
}

export interface RetryPolicy {
  /** Whether a 5xx is sent again: only where a retry that runs again finds what the first try made (see above). Default true. */
  serverErrors?: boolean;
}

/** `send()` until it answers, or until {@link retryDelayMs} says to stop; throws the last error with the tries made. */
export async function sendWithRetries<T>(
  send: () => Promise<T>,
  asError: (caught: unknown) => ApiError,
  policy: RetryPolicy = {},
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await send();
    } catch (caught) {
      const error = asError(caught);
      const wait = retryDelayMs(error, tries, policy);
      if (wait === undefined) {
        error.tries = tries;
        throw error;
      }
      await sleep(wait);
    }
  }
}
