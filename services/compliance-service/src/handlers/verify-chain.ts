import type { ChainVerification, Principal } from '@hallmark/contracts';
import { HallmarkError } from '@hallmark/contracts';
import type { EventStore } from '@hallmark/event-store';
import { leafHash } from '@hallmark/merkle';
import { assetStream, type ChainBreak, chainedRecordOf, createChainChecker, leafInputOf } from '@hallmark/provenance';
import type { SqlDatabase } from '@hallmark/sql';
import type { ProjectionWait } from '../projection-wait.ts';
import { loggedForAnotherOwner, readLeafHashes } from '../store/merkle-store.ts';
import { findCurrentAssetTree } from './merkle.ts';

const pageSize = 1_000;

const messages: Record<ChainBreak['reason'], (sequence: number) => string> = {
  HASH_MISMATCH: (n) => `Event ${n} does not hash to its stored hash: it was changed after it was written.`,
  PREV_HASH_MISMATCH: (n) => `Event ${n} does not link to the hash of event ${n - 1}.`,
  SEQUENCE_GAP: (n) => `Event ${n} is out of sequence: events are missing or reordered.`,
  OWNER_MISMATCH: (n) => `Event ${n} names another asset or owner than the events before it.`,
};

/**
 * GET /compliance/{assetId}/verify. Recomputes every hash from the event store, in pages, and
 * compares each event with the leaf the Merkle log recorded for it, so a rewrite that keeps the
 * chain consistent, or a deleted tail, is caught too.
 */
export async function verifyChain(
  deps: { db: SqlDatabase; eventStore: EventStore; clock: () => Date; projectionWait?: ProjectionWait },
  owner: Principal,
  assetId: string,
): Promise<ChainVerification> {
  // The log must hold every stored event, so each is compared with its leaf (read your writes).
  const tree = await findCurrentAssetTree(deps, owner, assetId);
  const id = tree?.assetId ?? assetId;
  // The owner is inside every hash, so events moved to another account were rewritten, chain and
  // all; the log, kept apart, still names the owner they were logged for (a review of 2026-12-05:
  // such a history answered valid to its new owner, and not found to the one the log names).
  const movedHere = !tree && (await loggedForAnotherOwner(deps.db, owner, assetId));
  const streamId = assetStream(id);
  const checker = createChainChecker();
  let broken: ChainVerification['brokenAt'];
  let count = 0;
  for (let after = 0; ; ) {
    const events = await deps.eventStore.readStream(streamId, { afterVersion: after, limit: pageSize });
    if (events.length === 0) break;
    const logged = tree ? await readLeafHashes(deps.db, tree, after, after + events.length) : new Map<number, Buffer>();
    for (const event of events) {
      const record = chainedRecordOf(event);
      // Another owner's asset is not found, unless the log records it as the caller's: then its events
      // were moved away from the caller, and the leaves below tell where they differ.
      if (count === 0 && !tree && (!record || record.accountId !== owner.accountId || record.environment !== owner.environment)) {
        throw new HallmarkError('NOT_FOUND', `Asset ${assetId} was not found.`, { assetId });
      }
      if (count === 0 && movedHere) {
        broken = {
          sequence: 1,
          eventId: event.eventId,
          reason: 'LOG_MISMATCH',
          message: 'The Merkle log recorded this asset for another owner than its events name: its history was moved.',
        };
      }
      if (!record) {
        broken ??= {
          sequence: event.streamVersion,
          eventId: event.eventId,
          reason: 'HASH_MISMATCH',
          message: `Event ${event.streamVersion} carries no chain fields.`,
        };
        count += 1;
        continue;
      }
      checker.add(record);
      const chainBreak = checker.result().brokenAt;
      if (chainBreak && !broken) {
        broken = {
          sequence: chainBreak.sequence,
          eventId: event.eventId,
          reason: chainBreak.reason,
          message: messages[chainBreak.reason](chainBreak.sequence),
        };
      }
      const leaf = logged.get(count);
      if (!broken && leaf && !leaf.equals(leafHash(leafInputOf(record.hash)))) {
        broken = {
          sequence: record.sequence,
          eventId: event.eventId,
          reason: 'LOG_MISMATCH',
          message: `Event ${record.sequence} differs from the event the Merkle log recorded at its place.`,
        };
      }
      count += 1;
    }
    after = events.at(-1)?.streamVersion ?? after;
  }
  if (count === 0) throw new HallmarkError('NOT_FOUND', `Asset ${assetId} was not found.`, { assetId });
  if (!broken && tree && tree.treeSize > count) {
    broken = {
      sequence: count + 1,
      eventId: '',
      reason: 'LOG_MISMATCH',
      message: `The Merkle log recorded ${tree.treeSize} events; the event store holds only ${count}.`,
    };
  }
  const result = checker.result();
  return {
    assetId: id,
    isValid: !broken,
    eventCount: count,
    headHash: result.headHash,
    checkedAt: deps.clock().toISOString(),
    ...(broken ? { brokenAt: broken } : {}),
  };
}
