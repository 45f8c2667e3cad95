import { describe, expect, it } from 'vitest';
import { createRequestTurns } from './request-turns.ts';

/** Resolves after the callbacks already queued with setImmediate (and the microtasks they start). */
const afterQueuedImmediates = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('request turns', () => {
  it('lets at most perTurn requests go in a turn of the event loop, in the order they came; the rest in later turns', async () => {
    const turns = createRequestTurns(2);
    const resumed: number[] = [];
    const all = [1, 2, 3, 4, 5].map((request) => turns.wait().then(() => resumed.push(request)));
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
    const requests = Array.from({ length: 20 }, (_, request) =>
      turns.wait().then(() => {
        order.push(`request ${request}`);
        const until = performance.now() + 1;
        while (performance.now() < until) {} // a millisecond of work
      }),
    );
    setTimeout(() => order.push('timer'), 0);
    await Promise.all(requests);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const timerAt = order.indexOf('timer');
    expect(timerAt).toBeGreaterThan(0);
    expect(timerAt).toBeLessThan(order.length - 1);
  });

  it('with turns off, a request goes on at once, before the loop’s next turn', async () => {
    const turns = createRequestTurns(0);
    let turnCame = false;
    setImmediate(() => {
      turnCame = true;
    });
    await turns.wait();
    expect(turnCame).toBe(false);
  });

  it('starts a new turn for a request that comes after the queue ran dry', async () => {
    const turns = createRequestTurns(3);
    await turns.wait();
    await afterQueuedImmediates();
    const resumed: string[] = [];
    const later = turns.wait().then(() => resumed.push('later'));
    await afterQueuedImmediates();
    expect(resumed).toEqual(['later']);
    await later;
  });
});
