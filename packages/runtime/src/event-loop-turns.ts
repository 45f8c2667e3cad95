/** Work that waits for turns of the event loop (createEventLoopTurns). */
export interface EventLoopTurns {
  /** Resolves in the caller's turn; `onTurn`, when given, runs as the turn lets the caller go on. */
  next(onTurn?: () => void): Promise<void>;
}

/**
 * Turns of the event loop shared by whoever waits for one, first come first served: a turn lets at
 * most `perTurn` waiters go on (their continuations run back to back once the turn's callback
 * returns), and the others wait for a later pass of the loop, after it has polled for I/O (an
 * immediate asked for while immediates run is run in the loop's next pass). With a `setImmediate`
 * each, every waiter went on in the same pass, one after another, and other I/O waited for all of
 * them. Used by the gateway's requests (request-turns.ts) and code-service's slices of large
 * requests (handlers/event-loop-turns.ts).
 */
export function createEventLoopTurns(perTurn: number): EventLoopTurns {
  const waiting: Array<() => void> = [];
  // A turn is asked for whenever something waits, and only then.
  const runTurn = () => {
    for (const goOn of waiting.splice(0, perTurn)) goOn();
    if (waiting.length > 0) setImmediate(runTurn);
  };
  return {
    next(onTurn) {
      return new Promise<void>((resolve) => {
        const goOn = onTurn
          ? () => {
              onTurn();
              resolve();
            }
          : resolve;
        if (waiting.push(goOn) === 1) setImmediate(runTurn);
      });
    },
  };
}
