import { type ExportedEvent, type ExportPage, HallmarkError, type Principal } from '@hallmark/contracts';
import type { EventStore } from '@hallmark/event-store';
import { inclusionProofFromNodes, inclusionRanges, leafHash, nodesNeeded } from '@hallmark/merkle';
import { assetStream, chainedRecordOf, leafInputOf } from '@hallmark/provenance';
import { readNodes } from '../store/merkle-store.ts';
import { type MerkleDeps, requireAssetTree, rootAt } from './merkle.ts';

const maxEvents = 250;
/**
 * A page's events, in UTF-8 bytes of their JSON: pages stay under NATS's 1 MB message (a reply
 * larger goes in parts, nats-reply-parts.ts), so the export's memory stays flat, page by page.
 */
const maxPageBytes = 600_000;

/**
 * One page of GET /compliance/{assetId}/export. The first call fixes the tree size (the current
 * one) and carries the signed checkpoint; later calls pass that size, so every proof in the export
 * is relative to the same signed root even while events are appended.
 */
export async function exportPage(
  deps: MerkleDeps & { eventStore: EventStore },
  owner: Principal,
  request: { assetId: string; treeSize?: number; fromLeafIndex: number },
): Promise<ExportPage> {
  // The first page waits for every stored event to be projected; later pages keep its tree size.
  const tree = await requireAssetTree(
    request.treeSize === undefined ? deps : { db: deps.db, signCheckpoint: deps.signCheckpoint },
    owner,
    request.assetId,
  );
  const treeSize = request.treeSize ?? tree.treeSize;
  if (treeSize > tree.treeSize) {
    throw new HallmarkError('VALIDATION_ERROR', `Invalid request: the tree has ${tree.treeSize} events.`, {
      treeSize: tree.treeSize,
    });
  }
  const rootHash = await rootAt(deps.db, tree, treeSize);
  const limit = Math.min(maxEvents, Math.max(0, treeSize - request.fromLeafIndex));
  const stored =
    limit > 0 ? await deps.eventStore.readStream(assetStream(tree.assetId), { afterVersion: request.fromLeafIndex, limit }) : [];
  const lookup = await readNodes(
    deps.db,
    tree,
    nodesNeeded(stored.flatMap((event) => inclusionRanges(event.streamVersion - 1, treeSize))),
  );
  const events: ExportedEvent[] = [];
  let bytes = 0;
  for (const event of stored) {
    const record = chainedRecordOf(event);
    const leafIndex = event.streamVersion - 1;
    const exported: ExportedEvent = {
      eventId: event.eventId,
      sequence: record?.sequence ?? event.streamVersion,
      type: event.type,
      occurredAt: record?.occurredAt ?? event.recordedAt,
      data: event.data,
      prevHash: record?.prevHash ?? null,
      hash: record?.hash ?? '',
      leafIndex,
      leafHash: record ? leafHash(leafInputOf(record.hash)).toString('hex') : '',
      auditPath: inclusionProofFromNodes(leafIndex, treeSize, lookup).map((hash) => hash.toString('hex')),
    };
    bytes += Buffer.byteLength(JSON.stringify(exported));
    if (events.length > 0 && bytes > maxPageBytes) break;
    events.push(exported);
  }
  const last = events.at(-1);
  const next = last ? last.leafIndex + 1 : request.fromLeafIndex;
  return {
    assetId: tree.assetId,
    owner: tree.owner,
    treeSize,
    rootHash: rootHash.toString('hex'),
    ...(request.treeSize === undefined
      ? { checkpoint: await deps.signCheckpoint(tree.owner, tree.assetId, treeSize, rootHash) }
      : {}),
    events,
    nextLeafIndex: next < treeSize && events.length > 0 ? next : null,
  };
}
