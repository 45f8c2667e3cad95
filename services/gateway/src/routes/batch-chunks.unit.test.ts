import { describe, expect, it } from 'vitest';
import { batchChunkStarts, chunkStartsOf, chunksToWaitFor, isOversizedItem } from './batch-chunks.ts';

const item = (metadataBytes: number) => ({
  gtin: '09506000134352',
  serialNumber: 'S',
  metadata: { note: 'x'.repeat(metadataBytes) },
});

describe('batch chunks', () => {
  it('puts up to 500 small items in a call', () => {
    expect(batchChunkStarts(Array.from({ length: 1_201 }, () => item(10)))).toEqual([0, 500, 1_000]);
  });

  it('splits items with large metadata so no call holds more than its byte budget', () => {
    const items = Array.from({ length: 100 }, () => item(16_000));
    const starts = batchChunkStarts(items);
    const ends = [...starts.slice(1), items.length];
    for (const [i, start] of starts.entries()) {
      const bytes = Buffer.byteLength(JSON.stringify(items.slice(start, ends[i])));
      expect(bytes).toBeLessThanOrEqual(384 * 1024);
    }
    expect(starts.length).toBeGreaterThanOrEqual(5);
  });

  it('gives an item larger than the budget a call of its own, and loses none', () => {
    const items = [item(10), item(500_000), item(10), item(10)];
    expect(batchChunkStarts(items, { maxItems: 500, maxBytes: 1_000 })).toEqual([0, 1, 2]);
    expect(batchChunkStarts([item(10)])).toEqual([0]);
  });

  it('names the items too large to send, worked out with the chunks', () => {
    const items = [item(10), item(70 * 1024), item(10), item(500_000)];
    expect([0, 1, 2, 3].map((index) => isOversizedItem(items, index))).toEqual([false, true, false, true]);
  });

  it('works a request’s chunks out once: the same items give the same starts, other items their own', () => {
    const items = Array.from({ length: 1_201 }, () => item(10));
    const starts = chunkStartsOf(items);
    expect(starts).toEqual(batchChunkStarts(items));
    expect(chunkStartsOf(items)).toBe(starts);
    expect(chunkStartsOf([item(10)])).toEqual([0]);
  });

  it('makes a chunk wait for the last earlier chunk repeating one of its GTINs and serials, and no other', () => {
    const of = (serialNumber: string) => ({ gtin: '09506000134352', serialNumber });
    // Chunks of two: [A B] [C A] [B C] [D E] [A x]: x names no code.
    const items = [of('A'), of('B'), of('C'), of('A'), of('B'), of('C'), of('D'), of('E'), of('A'), { gtin: 1 }];
    expect(chunksToWaitFor(items, [0, 2, 4, 6, 8])).toEqual([[], [0], [0, 1], [], [1]]);
    // Repeats within one chunk are its own call's to tell (the decider), not a wait.
    expect(chunksToWaitFor([of('A'), of('A')], [0])).toEqual([[]]);
    // Another GTIN with the same serial is another item.
    expect(chunksToWaitFor([of('A'), { gtin: '09506000134369', serialNumber: 'A' }], [0, 1])).toEqual([[], []]);
  });
});
