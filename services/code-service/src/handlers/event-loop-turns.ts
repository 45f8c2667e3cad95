import { createEventLoopTurns } from '@hallmark/runtime';

/**
 * How many codes a request works through before it hands the event loop a turn. A batch's chunk of
 * 500 codes built its links, events and rows in one stretch of 50–140 ms (garbage collection
 * included, on two shared cores), and every other request in the process, another tenant's single
 * generate among them, waited each such stretch out (bench:neighbours, docs/PERFORMANCE.md,
 * "Another tenant beside batches"). A request of at most this many codes never yields.
 */
export const codesPerTurn = 50;

/**
 * The turns the requests that yield share: one goes on a turn, first come first served, so the loop
 * polls for other requests' input between any two slices (with a turn of its own each, every chunk
 * in flight, 8 with two batches, went on in the same turn: 40–90 ms embedded).
 */
const sharedTurns = createEventLoopTurns(1);

/** A turn of the event loop before every `codesPerTurn`-th item but the first; nothing to wait for otherwise. */
export function turnBefore(index: number): Promise<void> | undefined {
  return index > 0 && index % codesPerTurn === 0 ? sharedTurns.next() : undefined;
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
