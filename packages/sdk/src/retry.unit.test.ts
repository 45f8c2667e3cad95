import { describe, expect, it } from 'vitest';
import { asksTooLongAWait, isRetryableStatus, isSafeToRepeat, retryAfterMs, retryDelayMs } from './retry.ts';

describe('which answers are retried', () => {
  it('408, 429 and every 5xx; not other 4xx', () => {
    const none = new Headers();
    for (const status of [408, 429, 500, 502, 503, 504])
      expect(isRetryableStatus(status, none, false, true), String(status)).toBe(true);
    for (const status of [400, 401, 403, 404, 405, 410, 413, 415, 422]) {
      expect(isRetryableStatus(status, none, true, true), String(status)).toBe(false);
    }
  });

  it('409 only as the answer to a retry while the same Idempotency-Key still runs', () => {
    const running = new Headers({ 'retry-after': '1' });
    expect(isRetryableStatus(409, running, true, true)).toBe(true);
    expect(isRetryableStatus(409, running, false, true)).toBe(false);
    expect(isRetryableStatus(409, new Headers(), true, true)).toBe(false);
  });

  it('a request not safe to repeat only on 429: a 5xx, even a 503 with Retry-After, may come after the work', () => {
    expect(isRetryableStatus(429, new Headers({ 'retry-after': '1' }), false, false)).toBe(true);
    for (const status of [408, 500, 502, 503, 504]) {
      expect(isRetryableStatus(status, new Headers({ 'retry-after': '1' }), false, false), String(status)).toBe(false);
    }
  });

  it('safe to repeat: the idempotent methods, a key the operation honours, and a verify', () => {
    for (const method of ['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS'])
      expect(isSafeToRepeat(method, '/x', false), method).toBe(true);
    expect(isSafeToRepeat('POST', '/api/v1/code/generate', true)).toBe(true);
    expect(isSafeToRepeat('POST', '/api/v1/code/verify', false)).toBe(true);
    expect(isSafeToRepeat('POST', '/api/v1/blocklist/bulk', false)).toBe(false);
    expect(isSafeToRepeat('PATCH', '/api/v1/links/{id}', false)).toBe(false);
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

  it('reads Retry-After as the Python client does: a negative number is no wait, of two joined values the first', () => {
    const now = Date.parse('2026-11-25T08:00:00Z');
    const retryAfter = (value: string) => retryAfterMs(new Headers({ 'retry-after': value }), now);
    // Numbers, not dates ("-5" and "+5" also parse as dates in the year 2001).
    expect(retryAfter('-5')).toBe(0);
    expect(retryAfter('-500000')).toBe(0);
    expect(retryAfter('+5')).toBe(5000);
    expect(retryAfter('1.5')).toBe(1500);
    expect(retryAfter('1e1')).toBe(10_000);
    // Two Retry-After lines, as Headers joins them.
    const twice = new Headers();
    twice.append('retry-after', '5');
    twice.append('retry-after', '5');
    expect(twice.get('retry-after')).toBe('5, 5');
    expect(retryAfterMs(twice, now)).toBe(5000);
    expect(retryAfter('5,7')).toBe(5000);
    // A date keeps its commas.
    expect(retryAfter('Wed, 25 Nov 2026 08:00:05 GMT')).toBe(5000);
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
