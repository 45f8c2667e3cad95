// How a CSV batch is cut into POST /code/generate/batch requests: at most the API's item limit and
// at most a byte budget of JSON body each, in the rows' order.

import type { BatchRow } from './csv.ts';

/** Items the API takes in one POST /code/generate/batch (packages/contracts, GenerateBatchBody). */
export const batchItemLimit = 10_000;

/**
 * Bytes of JSON body in one request. The route takes 16 MB, and the gateway splits it for the bus
 * itself (at most 500 items and 384 KB a message: services/gateway/src/routes/batch-chunks.ts); a
 * budget of 1,000,000 bytes keeps each request short, so the progress bar moves and a failed request
 * costs little.
 */
export const batchByteBudget = 1_000_000;

const encoder = new TextEncoder();

/** `{"items":[` and `]}` around the items. */
const envelopeBytes = encoder.encode(JSON.stringify({ items: [] })).length;

export interface BatchChunks {
  /** The requests to send, in order: each body `{ items }` is within both limits. */
  chunks: BatchRow[][];
  /** Rows too large for a request of their own: refused before sending. */
  tooLarge: BatchRow[];
}

/** The bytes `{ items: rows.map(body) }` takes as JSON (UTF-8), as the console sends it. */
export function bodyBytes(rows: readonly BatchRow[]): number {
  return encoder.encode(JSON.stringify({ items: rows.map((row) => row.body) })).length;
}

/** Cuts rows into requests of at most `maxItems` items and `maxBytes` bytes of JSON body each. */
export function chunkRows(
  rows: readonly BatchRow[],
  { maxItems = batchItemLimit, maxBytes = batchByteBudget }: { maxItems?: number; maxBytes?: number } = {},
): BatchChunks {
  const chunks: BatchRow[][] = [];
  const tooLarge: BatchRow[] = [];
  let current: BatchRow[] = [];
  let bytes = envelopeBytes;
  for (const row of rows) {
    const size = encoder.encode(JSON.stringify(row.body)).length;
    if (envelopeBytes + size > maxBytes) {
      tooLarge.push(row);
      continue;
    }
    // A comma before every item but the first.
    const added = current.length === 0 ? size : size + 1;
    if (current.length >= maxItems || bytes + added > maxBytes) {
      chunks.push(current);
      current = [];
      bytes = envelopeBytes;
    }
    bytes += current.length === 0 ? size : size + 1;
    current.push(row);
  }
  if (current.length > 0) chunks.push(current);
  return { chunks, tooLarge };
}
