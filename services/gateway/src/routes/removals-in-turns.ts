import type { RemovedByCreator } from '@hallmark/contracts';

/**
 * How long one request of `DELETE /blocklist?createdBy=` or `DELETE /links?createdBy=` keeps asking
 * its service for another turn (each turn a few chunks, within the service call's wait): the
 * answer then says `more: true` and the client sends the request again.
 */
export const removalRequestBudgetMs = 20_000;

/**
 * Asks `turn` again while it answers `more` and the request's budget lasts: a key's 100,000 links
 * are removed in turns that each fit the service call's wait (5 s), not one call that outlasts it.
 */
export async function removeInTurns(
  turn: () => Promise<RemovedByCreator>,
  { budgetMs = removalRequestBudgetMs, now = () => performance.now() }: { budgetMs?: number; now?: () => number } = {},
): Promise<RemovedByCreator> {
  const started = now();
  let removed = 0;
  for (;;) {
    const answer = await turn();
    removed += answer.removed;
    if (!answer.more || now() - started >= budgetMs) return { removed, more: answer.more };
  }
}
