/**
 * Requests handled in turns of the event loop. A request's work (authentication, routing, the
 * services it calls, its answer) starts after the loop has gathered its I/O (`setImmediate`), at most
 * `perTurn` requests a turn, in the order they came; the rest wait for the next turn, with the
 * timers and I/O in between.
 *
 * Why (docs/PERFORMANCE.md, "Requests in turns"): run inside each socket's read callback, every
 * request of a busy moment went through one after the other in a single stretch of the loop (50
 * connections: about 15 ms with nothing else running), and each answer woke its client while the
 * next request was being handled, so the process was preempted more. In turns, the longest stretch
 * is `perTurn` requests, and the answers of a turn go out together: in the embedded form, 45-70%
 * more verifications a second for the same CPU, and the loop's longest stall 18-24 → 9-12 ms.
 */
export interface RequestTurns {
  /** Resolves when this request's turn has come; at once when turns are off. */
  wait(): Promise<void>;
}

/** `perTurn` 0: no turns, every request runs in its socket's read callback as it arrives. */
export function createRequestTurns(perTurn: number): RequestTurns {
  if (perTurn <= 0) return { wait: () => Promise.resolve() };
  const waiting: Array<() => void> = [];
  let scheduled = false;

  const schedule = () => {
    scheduled = true;
    setImmediate(runTurn);
  };
  // Each resumed request runs on once this callback returns (its continuation is a microtask), so
  // the turn is the `perTurn` requests back to back; a later turn is a later pass of the loop.
  const runTurn = () => {
    scheduled = false;
    for (const resume of waiting.splice(0, perTurn)) resume();
    if (waiting.length > 0) schedule();
  };

  return {
    wait() {
      return new Promise<void>((resolve) => {
        waiting.push(resolve);
        if (!scheduled) schedule();
      });
    },
  };
}
