import { describe, expect, it } from 'vitest';
import { ApiError } from './api.ts';
import { answerLost, maxTries, retryDelayMs, sendWithRetries } from './retry.ts';

const error = (status: number, code = `HTTP_${status}`, retryAfterSeconds?: number) =>
  new ApiError(status, code, 'message', {}, retryAfterSeconds);

describe('retryDelayMs', () => {
  it('sends a request again after a lost answer, backing off, until the last try', () => {
    for (const lost of [
      error(0, 'NETWORK_ERROR'),
      error(502),
      error(503, 'SERVICE_UNAVAILABLE'),
      error(504, 'TIMEOUT'),
      error(500),
    ]) {
      expect(answerLost(lost)).toBe(true);
      expect([1, 2, 3].map((tries) => retryDelayMs(lost, tries))).toEqual([500, 1_000, 2_000]);
      expect(retryDelayMs(lost, maxTries)).toBeUndefined();
    }
  });

  it('waits as long as Retry-After says, but not longer than 10 s', () => {
    expect(retryDelayMs(error(503, 'SERVICE_UNAVAILABLE', 3), 1)).toBe(3_000);
    expect(retryDelayMs(error(429, 'RATE_LIMITED', 1), 1)).toBe(1_000);
    // The backoff when it is longer than Retry-After.
    expect(retryDelayMs(error(503, 'SERVICE_UNAVAILABLE', 1), 3)).toBe(2_000);
    expect(retryDelayMs(error(429, 'RATE_LIMITED', 2), 2)).toBe(2_000);
    // A daily quota's Retry-After is hours: the refusal is the answer.
    expect(retryDelayMs(error(429, 'RATE_LIMITED', 36_000), 1)).toBeUndefined();
    expect(retryDelayMs(error(503, 'SERVICE_UNAVAILABLE', 60), 1)).toBeUndefined();
  });

  it('takes a refusal as the answer, except the first attempt still running', () => {
    for (const refusal of [
      error(400, 'VALIDATION_ERROR'),
      error(403, 'FORBIDDEN'),
      error(422, 'IDEMPOTENCY_KEY_REUSED'),
      error(429, 'RATE_LIMITED'),
    ]) {
      expect(answerLost(refusal)).toBe(false);
      expect(retryDelayMs(refusal, 1)).toBeUndefined();
    }
    expect(retryDelayMs(error(409, 'CONFLICT'), 1)).toBeUndefined();
    expect(retryDelayMs(error(409, 'CONFLICT', 1), 1)).toBe(1_000);
  });

  it('sends a 5xx again only where a retry finds what the first try made; a lost connection and 429 always', () => {
    const noServerErrors = { serverErrors: false };
    expect(retryDelayMs(error(503, 'SERVICE_UNAVAILABLE'), 1, noServerErrors)).toBeUndefined();
    expect(retryDelayMs(error(500, 'INTERNAL_ERROR'), 1, noServerErrors)).toBeUndefined();
    expect(retryDelayMs(error(0, 'NETWORK_ERROR'), 1, noServerErrors)).toBe(500);
    expect(retryDelayMs(error(409, 'CONFLICT', 1), 1, noServerErrors)).toBe(1_000);
    expect(retryDelayMs(error(429, 'RATE_LIMITED', 2), 1, noServerErrors)).toBe(2_000);
    expect(retryDelayMs(error(503, 'SERVICE_UNAVAILABLE'), 1)).toBe(500);
  });
});

describe('sendWithRetries', () => {
  it('answers with the first success, having waited between tries', async () => {
    const waits: number[] = [];
    let calls = 0;
    const answer = await sendWithRetries(
      async () => {
        calls += 1;
        if (calls < 3) throw error(503);
        return 'made';
      },
      (caught) => caught as ApiError,
      {},
      async (ms) => void waits.push(ms),
    );
    expect(answer).toBe('made');
    expect(waits).toEqual([500, 1_000]);
  });

  it('throws the last error with the number of tries made', async () => {
    let calls = 0;
    const failing = sendWithRetries(
      async () => {
        calls += 1;
        throw error(0, 'NETWORK_ERROR');
      },
      (caught) => caught as ApiError,
      {},
      async () => {},
    );
    await expect(failing).rejects.toMatchObject({ code: 'NETWORK_ERROR', tries: maxTries });
    expect(calls).toBe(maxTries);
    const refused = sendWithRetries(
      async () => {
        throw error(400, 'VALIDATION_ERROR');
      },
      (caught) => caught as ApiError,
      {},
      async () => {},
    );
    await expect(refused).rejects.toMatchObject({ code: 'VALIDATION_ERROR', tries: 1 });
  });
});
