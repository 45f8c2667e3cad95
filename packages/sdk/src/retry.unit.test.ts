import { describe, expect, it } from 'vitest';
import { asksTooLongAWait, isRetryableStatus, retryAfterMs, retryDelayMs } from './retry.ts';

describe('which answers are retried', () => {
  it('408, 429 and every 5xx; not other 4xx', () => {
    const none = new Headers();
    for (const status of [408, 429, 500, 502, 503, 504])
      expect(isRetryableStatus(status, none, false), String(status)).toBe(true);
    for (const status of [400, 401, 403, 404, 405, 410, 413, 415, 422]) {
      expect(isRetryableStatus(status, none, true), String(status)).toBe(false);
    }
  });

  it('409 only as the answer to a retry while the same Idempotency-Key still runs', () => {
    const running = new Headers({ 'retry-after': '1' });
    expect(isRetryableStatus(409, running, true)).toBe(true);
    expect(isRetryableStatus(409, running, false)).toBe(false);
    expect(isRetryableStatus(409, new Headers(), true)).toBe(false);
  });
});

describe('how long to wait', () => {
  it('honours Retry-After in seconds, as a date and retry-after-ms', () => {
    expect(retryAfterMs(new Headers({ 'retry-after': '2' }))).toBe(2000);
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '150' }))).toBe(150);
    const now = Date.parse('2026-11-25T08:00:00Z');
    expect(retryAfterMs(new Headers({ 'retry-after': 'Wed, 25 Nov 2026 08:00:05 GMT' }), now)).toBe(5000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(retryDelayMs(1, new Headers({ 'retry-after': '3' }), () => 0.5)).toBe(3000);
  });

  it('backs off exponentially with jitter, up to 8 s, without Retry-After', () => {
    expect(retryDelayMs(1, undefined, () => 0)).toBe(500);
    expect(retryDelayMs(2, undefined, () => 0)).toBe(1000);
    expect(retryDelayMs(3, undefined, () => 0)).toBe(2000);
    expect(retryDelayMs(10, undefined, () => 0)).toBe(8000);
    expect(retryDelayMs(1, undefined, () => 0.999)).toBeCloseTo(375, 0);
    const delays = new Set(Array.from({ length: 20 }, () => retryDelayMs(2, undefined)));
    expect(delays.size).toBeGreaterThan(1);
    for (const delay of delays) {
      expect(delay).toBeGreaterThan(740);
      expect(delay).toBeLessThanOrEqual(1000);
    }
  });

  it('does not wait out a Retry-After longer than a minute (a daily quota): the error is thrown', () => {
    expect(asksTooLongAWait(new Headers({ 'retry-after': '3600' }))).toBe(true);
    expect(asksTooLongAWait(new Headers({ 'retry-after': '1' }))).toBe(false);
    expect(asksTooLongAWait(new Headers())).toBe(false);
  });
});
