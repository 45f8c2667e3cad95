import { describe, expect, it } from 'vitest';
import { createRequestTurns, maxWaitingPerConnection } from './request-turns.ts';

/** Resolves after the callbacks already queued with setImmediate (and the microtasks they start). */
const afterQueuedImmediates = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A request's turn: the promise admit gave (the test fails on anything else). */
function turnOf(admitted: Promise<void> | 'now' | 'refused'): Promise<void> {
  if (typeof admitted === 'string') throw new Error(`expected to wait for a turn, got ${admitted}`);
  return admitted;
}

describe('request turns', () => {
  it('lets at most perTurn requests go in a turn of the event loop, in the order they came; the rest in later turns', async () => {
    const turns = createRequestTurns(2);
    const resumed: number[] = [];
    const all = [1, 2, 3, 4, 5].map((request) => turnOf(turns.admit({}, 'POST')).then(() => resumed.push(request)));
    await Promise.resolve();
    expect(resumed).toEqual([]);
    await afterQueuedImmediates();
    expect(resumed).toEqual([1, 2]);
    await afterQueuedImmediates();
    expect(resumed).toEqual([1, 2, 3, 4]);
    await afterQueuedImmediates();
    expect(resumed).toEqual([1, 2, 3, 4, 5]);
    await Promise.all(all);
  });

  it('runs a timer that is due between two turns, not after all of them', async () => {
    const turns = createRequestTurns(1);
    const order: string[] = [];
    // From a timer's callback, the loop's next turn comes before its next timers: the first request
    // goes before the timer whatever the machine's load (begun elsewhere, a busy machine can let the
    // timer fall due before the first turn).
    await new Promise((resolve) => setTimeout(resolve, 0));
    setTimeout(() => order.push('timer'), 0);
    const requests = Array.from({ length: 20 }, (_, request) =>
      turnOf(turns.admit({}, 'GET')).then(() => {
        order.push(`request ${request}`);
        const until = performance.now() + 1;
        while (performance.now() < until) {} // a millisecond of work
      }),
    );
    await Promise.all(requests);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const timerAt = order.indexOf('timer');
    expect(timerAt).toBeGreaterThan(0);
    expect(timerAt).toBeLessThan(order.length - 1);
  });

  it('with turns off, every request goes on at once', () => {
    const turns = createRequestTurns(0);
    const connection = {};
    expect([turns.admit(connection, 'POST'), turns.admit(connection, 'POST'), turns.admit({}, 'GET')]).toEqual([
      'now',
      'now',
      'now',
    ]);
  });

  it('starts a new turn for a request that comes after the queue ran dry', async () => {
    const turns = createRequestTurns(3);
    await turnOf(turns.admit({}, 'GET'));
    await afterQueuedImmediates();
    const resumed: string[] = [];
    const later = turnOf(turns.admit({}, 'GET')).then(() => resumed.push('later'));
    await afterQueuedImmediates();
    expect(resumed).toEqual(['later']);
    await later;
  });

  it('keeps one waiting request a pipelining connection: safe ones behind it go at once, others wait in order up to the limit, then are refused', async () => {
    const turns = createRequestTurns(1);
    const pipelining = {};
    const first = turnOf(turns.admit(pipelining, 'GET'));
    // Safe behind safe: handled side by side (RFC 9112, 9.3.2), so nothing more waits.
    expect(turns.admit(pipelining, 'GET')).toBe('now');
    expect(turns.admit(pipelining, 'HEAD')).toBe('now');
    // One that changes something waits in order, and so does every request after it.
    const waiting = [turnOf(turns.admit(pipelining, 'POST'))];
    for (let count = 2; count < maxWaitingPerConnection; count += 1) waiting.push(turnOf(turns.admit(pipelining, 'GET')));
    expect(turns.admit(pipelining, 'POST')).toBe('refused');
    expect(turns.admit(pipelining, 'GET')).toBe('refused');
    // Another connection is not held back by it.
    const other = turnOf(turns.admit({}, 'POST'));
    await first;
    // The first went: one place is free again.
    const next = turnOf(turns.admit(pipelining, 'DELETE'));
    expect(turns.admit(pipelining, 'PUT')).toBe('refused');
    await Promise.all([...waiting, other, next]);
    // All went: the connection starts afresh.
    const again = turnOf(turns.admit(pipelining, 'GET'));
    expect(turns.admit(pipelining, 'GET')).toBe('now');
    await again;
  });
});
