/**
 * How a batch of generate items is split into calls to code-service. Each call must fit one bus
 * message (NATS: 1 MB by default), and an item may carry up to 16 KiB of metadata: so a call holds
 * at most `maxItems` items and, past its first item, no more than `maxBytes` of them as JSON
 * (500 items of 16 KiB would be 8 MB). Answers are small (no metadata): about 600 bytes an item.
 */
export interface BatchChunkLimits {
  maxItems: number;
  maxBytes: number;
}

export const batchChunkLimits: BatchChunkLimits = { maxItems: 500, maxBytes: 384 * 1024 };

/**
 * An item larger than this as JSON cannot be a valid generate body (its metadata may be 16 KiB):
 * the gateway answers it as refused without sending it, since one that passed the bus's 1 MB would
 * fail the whole batch.
 */
export const maxBatchItemBytes = 64 * 1024;

/** The JSON size of an item, as the split counts it. */
const batchItemBytes = (item: unknown): number => Buffer.byteLength(JSON.stringify(item) ?? 'null');

/**
 * The index of each chunk's first item, in order (the first is 0); `items` is not empty. Items over
 * maxBatchItemBytes are added to `oversized`, when given (their size is worked out here once).
 */
export function batchChunkStarts(
  items: readonly unknown[],
  limits: BatchChunkLimits = batchChunkLimits,
  oversized?: Set<number>,
): number[] {
  const starts: number[] = [];
  let count = 0;
  let bytes = 0;
  items.forEach((item, index) => {
    const itemBytes = batchItemBytes(item);
    if (itemBytes > maxBatchItemBytes) oversized?.add(index);
    const size = itemBytes + 1;
    if (index === 0 || count >= limits.maxItems || (count > 0 && bytes + size > limits.maxBytes)) {
      starts.push(index);
      count = 0;
      bytes = 0;
    }
    count += 1;
    bytes += size;
  });
  return starts;
}

interface ChunksOfBody {
  starts: number[];
  oversized: Set<number>;
}

const chunksOfBodies = new WeakMap<readonly unknown[], ChunksOfBody>();

/**
 * `batchChunkStarts` with the default limits, worked out once for a request's items: a keyed batch
 * needs them when its quota is spent (prepaid-work.ts, paidParts) and again in the route, with the
 * items too large to send (each item is serialised once: a 16 MiB body takes ~0.4 s to).
 */
function chunksOf(items: readonly unknown[]): ChunksOfBody {
  let chunks = chunksOfBodies.get(items);
  if (!chunks) {
    const oversized = new Set<number>();
    chunks = { starts: batchChunkStarts(items, batchChunkLimits, oversized), oversized };
    chunksOfBodies.set(items, chunks);
  }
  return chunks;
}

export const chunkStartsOf = (items: readonly unknown[]): number[] => chunksOf(items).starts;

/** Whether the item at `index` is larger than maxBatchItemBytes as JSON (no valid item is). */
export const isOversizedItem = (items: readonly unknown[], index: number): boolean => chunksOf(items).oversized.has(index);

/** An item's GTIN and serial as one key, when both are strings (else it names no code, and is refused). */
function itemKeyOf(item: unknown): string | undefined {
  if (typeof item !== 'object' || item === null) return undefined;
  const { gtin, serialNumber } = item as { gtin?: unknown; serialNumber?: unknown };
  return typeof gtin === 'string' && typeof serialNumber === 'string' ? `${gtin}\n${serialNumber}` : undefined;
}

/**
 * For each chunk (by `starts`), the earlier chunks it must wait for: the last earlier one holding an
 * item with the same GTIN and serial as one of its own. A serial repeated within a batch is
 * DUPLICATE_SERIAL for the later item; within one call the decider sees to that, across calls only
 * their order can (sent at once, the call that committed first won, however late its item).
 */
export function chunksToWaitFor(items: readonly unknown[], starts: readonly number[]): number[][] {
  const lastChunkOf = new Map<string, number>();
  return starts.map((start, chunk) => {
    const end = starts[chunk + 1] ?? items.length;
    const after = new Set<number>();
    for (let index = start; index < end; index++) {
      const key = itemKeyOf(items[index]);
      if (key === undefined) continue;
      const earlier = lastChunkOf.get(key);
      if (earlier !== undefined && earlier !== chunk) after.add(earlier);
      lastChunkOf.set(key, chunk);
    }
    return [...after];
  });
}
