/**
 * How many codes a request works through before it hands the event loop a turn. A batch's chunk of
 * 500 codes built its links, events and rows in one stretch of 50–140 ms (garbage collection
 * included, on two shared cores), and every other request in the process, another tenant's single
 * generate among them, waited each such stretch out (bench:neighbours, docs/PERFORMANCE.md,
 * "Another tenant beside batches"). A request of at most this many codes never yields.
 */
export const codesPerTurn = 50;

/**
 * The requests waiting for their next turn, first come first served. One goes on per turn of the
 * event loop: were each to wait for its own `setImmediate`, every chunk in flight (8 with two
 * batches) would go on in the same turn, one slice after another, and the loop would poll for
 * other requests' input only after all of them (40–90 ms embedded).
 */
const waitingForTurn: Array<() => void> = [];

/**
 * Lets the first waiting request go on, and asks for the next turn for the others. An immediate
 * asked for while immediates run is run in the loop's next turn, after it has polled for input.
 */
function letOneGoOn(): void {
  waitingForTurn.shift()?.();
  if (waitingForTurn.length > 0) setImmediate(letOneGoOn);
}

/** A turn of the event loop, shared fairly with every other request waiting for one. */
function nextTurnOfEventLoop(): Promise<void> {
  return new Promise((resolve) => {
    if (waitingForTurn.push(resolve) === 1) setImmediate(letOneGoOn);
  });
}

/** A turn of the event loop before every `codesPerTurn`-th item but the first; nothing to wait for otherwise. */
export function turnBefore(index: number): Promise<void> | undefined {
  return index > 0 && index % codesPerTurn === 0 ? nextTurnOfEventLoop() : undefined;
}

/** `items.map(map)`, with a turn of the event loop before every `codesPerTurn`-th item (turnBefore). */
export async function mapInTurns<Item, Result>(
  items: readonly Item[],
  map: (item: Item, index: number) => Result,
): Promise<Result[]> {
  const results: Result[] = [];
  for (const [index, item] of items.entries()) {
    await turnBefore(index);
    results.push(map(item, index));
  }
  return results;
}
