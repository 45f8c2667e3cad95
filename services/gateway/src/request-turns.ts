import { createEventLoopTurns } from '@hallmark/runtime';
import { isSafeMethod } from './safe-methods.ts';

/**
 * Requests handled in turns of the event loop. A request's work after parsing and routing
 * (authentication, limits, the services it calls, its answer) starts after the loop has gathered its
 * I/O (`setImmediate`), at most `perTurn` requests a turn, in the order they came; the rest wait for
 * the next turn, with the timers and I/O in between.
 *
 * Why (docs/PERFORMANCE-HISTORY.md, "Requests in turns"): run inside each socket's read callback, every
 * request of a busy moment went through one after the other in a single stretch of the loop (50
 * connections: about 15 ms with nothing else running), and each answer woke its client while the
 * next request was being handled, so the process was preempted more. In turns, the stretch of work
 * started together is `perTurn` requests, and the answers of a turn go out together: in the
 * embedded form, 45-70% more verifications a second for the same CPU, and the loop's longest stall
 * 18-24 → 11-16 ms.
 *
 * A connection that pipelines (sends requests before its answers came) has at most one request
 * waiting for a turn, or `maxWaitingPerConnection` when they are not all safe. Node stops reading a
 * connection whose unsent answers pile up, and a request that waits has no answer yet: without
 * this, one pipelining client could fill the queue without end and starve everyone else. A safe
 * request (GET, HEAD, OPTIONS) behind safe requests that wait runs at once, as RFC 9112 (9.3.2) lets
 * a server handle safe pipelined requests side by side; its answer still goes out in order. One
 * that would change something waits in order behind them, up to the limit; beyond, it is refused.
 */
export interface RequestTurns {
  /**
   * Where a request read from `connection` goes: a promise of its turn; `now` (turns off, or a safe
   * request pipelined behind safe ones); `refused` (too many of the connection's requests wait).
   */
  admit(connection: object, method: string): Promise<void> | 'now' | 'refused';
}

/** Requests of one connection that may wait for turns at once, when some of them are not safe. */
export const maxWaitingPerConnection = 8;

/** `perTurn` 0: no turns, every request runs in its socket's read callback as it arrives. */
export function createRequestTurns(perTurn: number): RequestTurns {
  if (perTurn <= 0) return { admit: () => 'now' };
  /** What waits, by connection: how many requests, and how many of them not safe. */
  const waitingOf = new WeakMap<object, { requests: number; unsafe: number }>();
  // Each request let go on runs once the turn's callback returns (its continuation is a microtask),
  // so a turn is `perTurn` requests back to back; a later turn is a later pass of the loop.
  const turns = createEventLoopTurns(perTurn);

  return {
    admit(connection, method) {
      const safe = isSafeMethod(method);
      const waiting = waitingOf.get(connection);
      if (waiting) {
        if (safe && waiting.unsafe === 0) return 'now';
        if (waiting.requests >= maxWaitingPerConnection) return 'refused';
        waiting.requests += 1;
        if (!safe) waiting.unsafe += 1;
      } else waitingOf.set(connection, { requests: 1, unsafe: safe ? 0 : 1 });
      // Its turn: it waits no more.
      return turns.next(() => {
        const left = waitingOf.get(connection);
        if (!left) return;
        left.requests -= 1;
        if (!safe) left.unsafe -= 1;
        if (left.requests === 0) waitingOf.delete(connection);
      });
    },
  };
}
