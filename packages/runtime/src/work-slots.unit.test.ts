import { HallmarkError } from '@hallmark/contracts';
import { describe, expect, it } from 'vitest';
import { createWorkSlots } from './work-slots.ts';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

describe('decode slots', () => {
  it('runs two at once, queues two, refuses the fifth with 503 and a retry delay, and serves again once free', async () => {
    const slots = createWorkSlots({ running: 2, waiting: 2, retryAfterSeconds: 1, busy: 'Too many photos are being decoded' });
    const gates = Array.from({ length: 4 }, gate);
    const started: number[] = [];
    const runs = gates.map((g, i) =>
      slots.run(async () => {
        started.push(i);
        await g.opened;
        return i;
      }),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([0, 1]);
    const refused = await slots.run(async () => 'never').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(HallmarkError);
    expect(refused).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { retryAfterSeconds: 1 } });
    gates[0]?.open();
    await runs[0];
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([0, 1, 2]);
    for (const g of gates) g.open();
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3]);
    expect(await slots.run(async () => 'again')).toBe('again');
  });

  it('frees the slot when the work fails', async () => {
    const slots = createWorkSlots({ running: 1, waiting: 0, retryAfterSeconds: 1, busy: 'Too many photos are being decoded' });
    await expect(
      slots.run(async () => {
        throw new Error('bad image');
      }),
    ).rejects.toThrow('bad image');
    expect(await slots.run(async () => 'next')).toBe('next');
  });
});

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('work whose requester is gone', () => {
  it('leaves the queue when its signal aborts, never taking a slot, and the next waiter gets the slot', async () => {
    const slots = createWorkSlots({ running: 1, waiting: 2, retryAfterSeconds: 1, busy: 'Too many photos are being uploaded' });
    const first = gate();
    const started: string[] = [];
    const running = slots.run(async () => {
      started.push('running');
      await first.opened;
    });
    const leaving = new AbortController();
    const gone = slots.run(async () => started.push('gone'), { signal: leaving.signal }).catch((error: unknown) => error);
    const next = slots.run(async () => started.push('next'));
    leaving.abort(new Error('client left'));
    expect(await gone).toMatchObject({ message: 'client left' });
    first.open();
    await running;
    await next;
    expect(started).toEqual(['running', 'next']);
    // Its place in the queue was given back: two can wait again behind a running one.
    const again = gate();
    const held = slots.run(() => again.opened);
    const waiters = [slots.run(async () => 'a'), slots.run(async () => 'b')];
    await expect(slots.run(async () => 'c')).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    again.open();
    await held;
    expect(await Promise.all(waiters)).toEqual(['a', 'b']);
  });

  it('refuses work whose signal has already aborted without taking a slot', async () => {
    const slots = createWorkSlots({ running: 1, waiting: 0, retryAfterSeconds: 1, busy: 'Too many photos are being uploaded' });
    const aborted = AbortSignal.abort(new Error('already gone'));
    let ran = false;
    await expect(
      slots.run(
        async () => {
          ran = true;
        },
        { signal: aborted },
      ),
    ).rejects.toThrow('already gone');
    expect(ran).toBe(false);
    expect(await slots.run(async () => 'free')).toBe('free');
  });

  it('does not stop work already running when its signal aborts; the slot is freed when it ends', async () => {
    const slots = createWorkSlots({ running: 1, waiting: 0, retryAfterSeconds: 1, busy: 'Too many photos are being uploaded' });
    const leaving = new AbortController();
    const work = gate();
    const running = slots.run(() => work.opened.then(() => 'done'), { signal: leaving.signal });
    leaving.abort(new Error('client left'));
    await nextTurn();
    await expect(slots.run(async () => 'refused')).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    work.open();
    expect(await running).toBe('done');
    expect(await slots.run(async () => 'free')).toBe('free');
  });
});

describe("an owner's share of the slots", () => {
  const share = { running: 2, waiting: 2, busy: 'This account already has as many uploads in progress as one account may' };

  it('runs at most its share of one owner at once, lets other owners pass its waiting work, and refuses beyond its share of the queue', async () => {
    const slots = createWorkSlots({
      running: 4,
      waiting: 4,
      perOwner: share,
      retryAfterSeconds: 1,
      busy: 'Too many photos are being uploaded',
    });
    const gates = Array.from({ length: 4 }, gate);
    const started: string[] = [];
    const greedy = gates.map((g, i) =>
      slots.run(
        async () => {
          started.push(`a${i}`);
          await g.opened;
          return `a${i}`;
        },
        { owner: 'a' },
      ),
    );
    await nextTurn();
    // Two of a's run, two wait although two slots are free.
    expect(started).toEqual(['a0', 'a1']);
    const refused = await slots.run(async () => 'a4', { owner: 'a' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(HallmarkError);
    expect(refused).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: `${share.busy}; retry in a moment.`,
      details: { retryAfterSeconds: 1 },
    });
    // Another owner runs at once in the free slots.
    expect(await slots.run(async () => 'b0', { owner: 'b' })).toBe('b0');
    expect(await slots.run(async () => 'c0', { owner: 'c' })).toBe('c0');
    // One of a's ends: its first waiting work takes the slot.
    gates[0]?.open();
    await greedy[0];
    await nextTurn();
    expect(started).toEqual(['a0', 'a1', 'a2']);
    for (const g of gates) g.open();
    expect(await Promise.all(greedy)).toEqual(['a0', 'a1', 'a2', 'a3']);
  });

  it("gives a freed slot to another owner's waiting work before the work of an owner at its share", async () => {
    const slots = createWorkSlots({
      running: 2,
      waiting: 2,
      perOwner: { ...share, running: 1, waiting: 1 },
      retryAfterSeconds: 1,
      busy: 'busy',
    });
    const a = gate();
    const b = gate();
    const order: string[] = [];
    const a0 = slots.run(() => a.opened.then(() => order.push('a0')), { owner: 'a' });
    const b0 = slots.run(() => b.opened.then(() => order.push('b0')), { owner: 'b' });
    // Both slots taken: a's second waits first, then c's.
    const a1 = slots.run(async () => order.push('a1'), { owner: 'a' });
    const c0 = slots.run(async () => order.push('c0'), { owner: 'c' });
    b.open();
    await b0;
    await c0;
    // b's slot went to c: a still runs its share.
    expect(order).toEqual(['b0', 'c0']);
    a.open();
    await Promise.all([a0, a1]);
    expect(order).toEqual(['b0', 'c0', 'a0', 'a1']);
  });
});
