import { describe, expect, it } from 'vitest';
import { batchByteBudget, batchItemLimit, bodyBytes, chunkRows } from './batch-chunks.ts';
import type { BatchRow } from './csv.ts';

const row = (line: number, metadataBytes = 0): BatchRow => ({
  line,
  body: {
    gtin: '09506000134352',
    serialNumber: `SN-${line}`,
    ...(metadataBytes > 0 ? { metadata: { notes: 'é'.repeat(metadataBytes / 2) } } : {}),
  },
});
const rows = (count: number, metadataBytes = 0) => Array.from({ length: count }, (_, index) => row(index + 2, metadataBytes));

describe('a CSV batch cut into requests', () => {
  it('keeps the rows’ order, loses none and repeats none', () => {
    const all = rows(2_345, 600);
    const { chunks, tooLarge } = chunkRows(all, { maxItems: 1_000, maxBytes: 200_000 });
    expect(tooLarge).toEqual([]);
    expect(chunks.flat()).toEqual(all);
    expect(chunks.length).toBeGreaterThan(3);
  });

  it('sends at most the API’s 10,000 items in a request', () => {
    const { chunks } = chunkRows(rows(25_001));
    expect(chunks.map((chunk) => chunk.length)).toEqual([10_000, 10_000, 5_001]);
    expect(batchItemLimit).toBe(10_000);
  });

  it('cuts by the byte budget of the JSON body (UTF-8), filling each request as far as it goes', () => {
    // 16 KiB of metadata a row (the API's most): 1 MB holds about 60 of them.
    const all = rows(200, 16_000);
    const { chunks } = chunkRows(all);
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    for (const [index, chunk] of chunks.entries()) {
      expect(bodyBytes(chunk)).toBeLessThanOrEqual(batchByteBudget);
      // Not cut early: the next row would not have fitted.
      const next = chunks[index + 1]?.[0];
      if (next) expect(bodyBytes([...chunk, next])).toBeGreaterThan(batchByteBudget);
    }
    expect(chunks.flat()).toEqual(all);
  });

  it('counts the body exactly as JSON.stringify writes it', () => {
    for (const count of [1, 2, 3, 17]) {
      const some = rows(count, 40);
      const exact = bodyBytes(some);
      expect(chunkRows(some, { maxBytes: exact }).chunks).toEqual([some]);
      expect(chunkRows(some, { maxBytes: exact - 1 }).chunks.length).toBe(count === 1 ? 0 : 2);
    }
  });

  it('refuses before sending a row too large for a request of its own, and sends the others', () => {
    const huge = row(3, 40_000);
    const { chunks, tooLarge } = chunkRows([row(2), huge, row(4)], { maxBytes: 30_000 });
    expect(tooLarge).toEqual([huge]);
    expect(chunks).toEqual([[row(2), row(4)]]);
  });

  it('makes no request for no rows', () => {
    expect(chunkRows([])).toEqual({ chunks: [], tooLarge: [] });
  });
});
