import { HallmarkError, type Principal } from '@hallmark/contracts';
import {
  type EventStore,
  isVersionConflict,
  type JsonObject,
  type NewEvent,
  type ReadModelWrite,
  type StoredEvent,
  versionConflict,
} from '@hallmark/event-store';
import {
  assetStream,
  type ChainedRecord,
  chainedRecordOf,
  hashProvenanceRecord,
  type ProvenanceRecord,
  provenanceMetadataOf,
} from './provenance-record.ts';

export interface AssetRef {
  assetId: string;
  owner: Principal;
}

export interface ProvenanceEventInput {
  type: string;
  data: Record<string, unknown>;
  metadata?: JsonObject;
  eventId?: string;
}

/** Chains new events after `head` (undefined: they start the asset's history). */
export function chainEvents(
  asset: AssetRef,
  head: ChainedRecord | undefined,
  inputs: readonly ProvenanceEventInput[],
  occurredAt: string,
): { events: NewEvent[]; records: ChainedRecord[] } {
  let previous = head;
  const records: ChainedRecord[] = [];
  const events = inputs.map((input) => {
    const record: ProvenanceRecord = {
      assetId: asset.assetId,
      accountId: asset.owner.accountId,
      environment: asset.owner.environment,
      sequence: (previous?.sequence ?? 0) + 1,
      type: input.type,
      occurredAt,
      data: input.data,
      prevHash: previous?.hash ?? null,
    };
    const chained = { ...record, hash: hashProvenanceRecord(record) };
    records.push(chained);
    previous = chained;
    return {
      type: input.type,
      data: input.data,
      metadata: { ...input.metadata, provenance: provenanceMetadataOf(chained) },
      ...(input.eventId ? { eventId: input.eventId } : {}),
    };
  });
  return { events, records };
}

/** The first events of new assets, for `EventStore.startStreams` (one atomic write for a batch). */
export function startAssetHistory(
  asset: AssetRef,
  inputs: readonly ProvenanceEventInput[],
  occurredAt: string,
): { streamId: string; events: NewEvent[] } {
  return { streamId: assetStream(asset.assetId), events: chainEvents(asset, undefined, inputs, occurredAt).events };
}

/**
 * The time of events chained after one dated `previous`: now, or `previous` when the clock reads
 * earlier (stepped back, or another replica's clock behind this one's). A history never dates an
 * event before the one it follows.
 */
function notBefore(now: Date, previous: string): string {
  const at = now.toISOString();
  return Date.parse(previous) > now.getTime() ? previous : at;
}

/** Under heavy contention one writer wins per round; give up only after many rounds. */
const maxAttempts = 100;

/**
 * Appends events to an existing asset's history. The chain is serialised by the store's optimistic
 * concurrency, never by a local lock: read the head, chain after it, append at the head's version;
 * when another writer got there first, read the new head and try again. With `expectedVersion` the
 * caller decided on that version of the history, so a moved stream is a CONFLICT instead.
 * `readModels` are written in the append's transaction (and again on each retry's).
 */
export async function appendToAssetHistory(
  store: EventStore,
  asset: AssetRef,
  inputs: readonly ProvenanceEventInput[],
  options: { now: () => Date; expectedVersion?: number; readModels?: ReadModelWrite },
): Promise<StoredEvent[]> {
  const streamId = assetStream(asset.assetId);
  for (let attempt = 1; ; attempt += 1) {
    const last = await store.readLastEvent(streamId);
    const head = last && chainedRecordOf(last);
    if (!last || !head)
      throw new HallmarkError('NOT_FOUND', `Asset ${asset.assetId} has no history.`, { assetId: asset.assetId });
    if (head.accountId !== asset.owner.accountId || head.environment !== asset.owner.environment) {
      throw new HallmarkError('NOT_FOUND', `Asset ${asset.assetId} has no history.`, { assetId: asset.assetId });
    }
    if (options.expectedVersion !== undefined && options.expectedVersion !== last.streamVersion) {
      throw versionConflict(streamId, options.expectedVersion, last.streamVersion);
    }
    const { events } = chainEvents(asset, head, inputs, notBefore(options.now(), head.occurredAt));
    try {
      const result = await store.append(streamId, events, {
        expectedVersion: last.streamVersion,
        ...(options.readModels ? { readModels: options.readModels } : {}),
      });
      return result.events;
    } catch (error) {
      if (!isVersionConflict(error) || options.expectedVersion !== undefined || attempt >= maxAttempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 * attempt)));
    }
  }
}
