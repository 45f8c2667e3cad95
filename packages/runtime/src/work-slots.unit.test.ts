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
