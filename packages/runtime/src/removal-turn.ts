import type { RemovedByCreator } from '@hallmark/contracts';

/** Rows a removal by creator (DELETE /blocklist?createdBy=, /links?createdBy=) removes in one transaction, one event each. */
export const removalChunk = 500;

/** How long one call of such a removal goes on to another chunk: its answer must fit the gateway's wait for a service (5 s). */
export const removalTurnMs = 2_000;

/**
 * What one chunk of a removal did: `found` rows read (0: none is left), `removed` of them (0 when
 * another request removed or changed one meanwhile, and the chunk is to be read again).
 */
export interface RemovedChunk {
  found: number;
  removed: number;
}

/**
 * Removes chunk after chunk until none is left or removalTurnMs has passed; answers how many were
 * removed and whether more may be left (the gateway calls again: removals-in-turns.ts).
 */
export async function removeChunksForATurn(removeChunk: () => Promise<RemovedChunk>): Promise<RemovedByCreator> {
  const started = performance.now();
  let removed = 0;
  for (;;) {
    const chunk = await removeChunk();
    if (chunk.found === 0) return { removed, more: false };
    removed += chunk.removed;
    if (performance.now() - started >= removalTurnMs) return { removed, more: true };
  }
}
