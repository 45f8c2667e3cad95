import { HallmarkError } from '@hallmark/contracts';

/** Who asks for a slot, and for how long the work is still wanted. */
export interface SlotClaim {
  /** Whose work it is (an account): with `perOwner`, one owner holds at most that many slots and places in the queue. */
  owner?: string;
  /**
   * Aborted once nobody waits for the work any more (its client left, its time ran out). Work that
   * waits for a slot then leaves the queue without ever taking one, and `run` fails with the
   * signal's reason; so does `run` when the signal is already aborted. Running work is not stopped
   * by it: the work itself listens to the signal if it should end early.
   */
  signal?: AbortSignal;
}

export interface WorkSlots {
  /**
   * Runs `work` when one of the slots is free (and its owner holds fewer than its share), waiting in
   * a short queue for one; fails with SERVICE_UNAVAILABLE (`details.retryAfterSeconds`) when the
   * queue, or the owner's share of it, is full too.
   */
  run<T>(work: () => Promise<T>, claim?: SlotClaim): Promise<T>;
}

/** What one owner holds: slots it runs in, places it waits in. */
interface Held {
  running: number;
  waiting: number;
}

interface Waiter {
  owner: string | undefined;
  /** Hands the waiter the slot a finished work freed. */
  start(): void;
}

/**
 * A bound on costly work a process does at once (decoding photos, holding uploads in memory): a
 * burst waits in a short queue or is told to come back (`busy` names what is busy), instead of
 * exhausting the process. With `perOwner`, no owner holds more than its share of the slots and of
 * the queue: another owner's work waiting behind an owner at its share takes a freed slot first.
 */
export function createWorkSlots(limits: {
  running: number;
  waiting: number;
  perOwner?: { running: number; waiting: number; busy: string };
  retryAfterSeconds: number;
  busy: string;
}): WorkSlots {
  let running = 0;
  const queue: Waiter[] = [];
  const heldBy = new Map<string, Held>();

  const heldOf = (owner: string | undefined): Held =>
    owner === undefined ? { running: 0, waiting: 0 } : (heldBy.get(owner) ?? { running: 0, waiting: 0 });
  const note = (owner: string | undefined, change: Held) => {
    if (owner === undefined || !limits.perOwner) return;
    const held = heldOf(owner);
    const next = { running: held.running + change.running, waiting: held.waiting + change.waiting };
    if (next.running === 0 && next.waiting === 0) heldBy.delete(owner);
    else heldBy.set(owner, next);
  };
  const mayRun = (owner: string | undefined) => !limits.perOwner || heldOf(owner).running < limits.perOwner.running;
  const refusal = (busy: string) =>
    new HallmarkError('SERVICE_UNAVAILABLE', `${busy}; retry in a moment.`, { retryAfterSeconds: limits.retryAfterSeconds });

  // Whenever a slot is free, the first waiter whose owner is below its share takes it. Nothing else
  // makes a waiter able to run, so no waiter that could run is ever left in the queue.
  const startWaiters = () => {
    while (running < limits.running) {
      const index = queue.findIndex((waiter) => mayRun(waiter.owner));
      if (index < 0) return;
      const [next] = queue.splice(index, 1) as [Waiter];
      note(next.owner, { running: 1, waiting: -1 });
      running += 1;
      next.start();
    }
  };

  const waitForSlot = (owner: string | undefined, signal: AbortSignal | undefined) =>
    new Promise<void>((resolve, reject) => {
      const leave = () => {
        const index = queue.indexOf(waiter);
        if (index >= 0) {
          queue.splice(index, 1);
          note(owner, { running: 0, waiting: -1 });
        }
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        owner,
        start() {
          signal?.removeEventListener('abort', leave);
          resolve();
        },
      };
      signal?.addEventListener('abort', leave, { once: true });
      queue.push(waiter);
      note(owner, { running: 0, waiting: 1 });
    });

  return {
    async run(work, claim = {}) {
      const { owner, signal } = claim;
      signal?.throwIfAborted();
      if (running < limits.running && mayRun(owner)) {
        running += 1;
        note(owner, { running: 1, waiting: 0 });
      } else {
        const perOwner = limits.perOwner;
        if (perOwner && heldOf(owner).waiting >= perOwner.waiting) throw refusal(perOwner.busy);
        if (queue.length >= limits.waiting) throw refusal(limits.busy);
        // The slot is handed over by startWaiters(), `running` already counting it.
        await waitForSlot(owner, signal);
      }
      try {
        return await work();
      } finally {
        running -= 1;
        note(owner, { running: -1, waiting: 0 });
        startWaiters();
      }
    },
  };
}
