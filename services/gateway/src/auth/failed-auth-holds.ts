import type { CounterState } from '@hallmark/cache';

/** An address this replica saw refused for its failed authentications, and the counter that refused it. */
export interface FailedAuthHold {
  reported: CounterState;
  /** When it was noted: a clock stepped back before it lets it go (else it would hold for the step's length). */
  notedAtMs: number;
}

/** More addresses than this held at once: the ones whose minute ended are let go first; beyond, none is noted. */
const maxAddresses = 10_000;

/**
 * Client addresses (as `addressKeyOf` names them) this replica saw refused for failed
 * authentications, until the counter's minute ends. A held address's request with a key that is
 * not a cached valid key is then refused without counting it again (the count is past its limit
 * until the minute ends, whatever other replicas add), and its keys not yet cached are looked up
 * one at a time (`lookUpInTurn`): an address guessing keys as fast as it can holds at most one of
 * the database's connections, not the whole pool.
 */
export function createFailedAuthHolds() {
  const byAddress = new Map<string, FailedAuthHold>();
  let lastSweepMs = Number.NEGATIVE_INFINITY;

  return {
    /** Notes the refusal of an address's failed authentications, held until `reported.resetAtMs`. */
    note(address: string, reported: CounterState, nowMs: number): void {
      if (byAddress.size >= maxAddresses && nowMs - lastSweepMs >= 1_000) {
        lastSweepMs = nowMs;
        for (const [held, hold] of byAddress) if (hold.reported.resetAtMs <= nowMs) byAddress.delete(held);
      }
      if (byAddress.size >= maxAddresses && !byAddress.has(address)) return;
      byAddress.set(address, { reported, notedAtMs: nowMs });
    },

    /** The address's hold, while its minute lasts. */
    holding(address: string, nowMs: number): FailedAuthHold | undefined {
      const hold = byAddress.get(address);
      if (!hold) return undefined;
      if (hold.reported.resetAtMs > nowMs && nowMs >= hold.notedAtMs) return hold;
      byAddress.delete(address);
      return undefined;
    },
  };
}
export type FailedAuthHolds = ReturnType<typeof createFailedAuthHolds>;

/** Look-ups of one held address waiting behind the one running; beyond, its request is refused at once. */
export const maxLookUpsWaitingPerAddress = 16;

/**
 * Runs the look-ups of each address one at a time, in arrival order, with at most
 * `maxLookUpsWaitingPerAddress` waiting: `undefined` when that many already wait. A valid key sent
 * from a held address (a client behind the same NAT as a guesser) is still looked up, behind the
 * guesses already waiting, which each take one indexed read.
 */
export function createLookUpTurns() {
  const queues = new Map<string, { tail: Promise<unknown>; size: number }>();
  return {
    inTurn<T>(address: string, lookUp: () => Promise<T>): Promise<T> | undefined {
      let queue = queues.get(address);
      if (queue && queue.size > maxLookUpsWaitingPerAddress) return undefined;
      if (!queue) queues.set(address, (queue = { tail: Promise.resolve(), size: 0 }));
      const current = queue;
      current.size += 1;
      const run = current.tail.then(lookUp);
      current.tail = run.then(
        () => undefined,
        () => undefined,
      );
      current.tail.then(() => {
        current.size -= 1;
        if (current.size === 0 && queues.get(address) === current) queues.delete(address);
      });
      return run;
    },
  };
}
export type LookUpTurns = ReturnType<typeof createLookUpTurns>;
