import { HallmarkError, type Principal } from '@hallmark/contracts';
import { type EventStore, isVersionConflict, type StoredEvent } from '@hallmark/event-store';
import { appendToAssetHistory, assetStream, type ProvenanceEventInput } from '@hallmark/provenance';
import type { SqlDatabase } from '@hallmark/sql';
import { foldObjectHistory, type ObjectState } from './object-history.ts';
import { findObjectId, saveObject } from './store/object-store.ts';

export interface ObjectRepositoryDeps {
  db: SqlDatabase;
  eventStore: EventStore;
  clock: () => Date;
}

/** Events read a page at a time (as compliance-service's chain check does). */
const historyPageSize = 1_000;

/**
 * Every event of the object's stream. Read in pages to its end: one read of a fixed size would cut
 * a longer history short, fold an older version, and every later write would meet a version conflict.
 */
async function readObjectHistory(eventStore: EventStore, objectId: string): Promise<StoredEvent[]> {
  const events: StoredEvent[] = [];
  for (;;) {
    const afterVersion = events.at(-1)?.streamVersion ?? 0;
    const page = await eventStore.readStream(assetStream(objectId), { afterVersion, limit: historyPageSize });
    for (const event of page) events.push(event);
    if (page.length < historyPageSize) return events;
  }
}

/** An object's current state, from its stream (the truth), not from the read model. */
export async function loadObject(deps: ObjectRepositoryDeps, objectId: string): Promise<ObjectState | undefined> {
  return foldObjectHistory(await readObjectHistory(deps.eventStore, objectId));
}

/** The owner's object (by id or serial) with the events it was folded from; NOT_FOUND for anyone else's. */
export async function requireOwnedHistory(
  deps: ObjectRepositoryDeps,
  owner: Principal,
  idOrSerial: string,
): Promise<{ state: ObjectState; events: StoredEvent[] }> {
  const id = await findObjectId(deps.db, owner, idOrSerial);
  const events = id ? await readObjectHistory(deps.eventStore, id) : [];
  const state = foldObjectHistory(events);
  if (!state) throw new HallmarkError('NOT_FOUND', `Object ${idOrSerial} was not found.`, { objectId: idOrSerial });
  return { state, events };
}

export async function requireOwnedObject(deps: ObjectRepositoryDeps, owner: Principal, idOrSerial: string): Promise<ObjectState> {
  return (await requireOwnedHistory(deps, owner, idOrSerial)).state;
}

/**
 * Decides on the current state and appends what `decide` returns at that state's version; when
 * another replica changed the object first, reloads and decides again (a few times). Then
 * refreshes the read model. `decide` throws to refuse; no events is no change.
 */
export async function changeObject(
  deps: ObjectRepositoryDeps,
  owner: Principal,
  idOrSerial: string,
  decide: (state: ObjectState) => ProvenanceEventInput[] | Promise<ProvenanceEventInput[]>,
): Promise<{ state: ObjectState; appended: StoredEvent[] }> {
  for (let attempt = 1; ; attempt += 1) {
    const { state: before, events } = await requireOwnedHistory(deps, owner, idOrSerial);
    const inputs = await decide(before);
    // Nothing to record (an Idempotency-Key's event stored already): the state as it is.
    if (inputs.length === 0) return { state: before, appended: [] };
    try {
      const appended = await appendToAssetHistory(deps.eventStore, { assetId: before.id, owner }, inputs, {
        now: deps.clock,
        expectedVersion: before.version,
      });
      // Appended at the version decided on: the history is the events read plus these.
      const after = foldObjectHistory([...events, ...appended]) as ObjectState;
      // The change is stored once appended: a read model that cannot be refreshed now (a lost
      // connection) must not turn it into an error, or the client's retry would append it again
      // (issue #17: duplicate events under faults). The next change of the object refreshes it
      // (saveObject writes the whole state), and transfer commands repair it from the stream.
      await saveObject(deps.db, after, deps.clock()).catch(() => {});
      return { state: after, appended };
    } catch (error) {
      // Only a version conflict is retried: a refusal decided on the state is an answer.
      if (!isVersionConflict(error) || attempt >= 20) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 * attempt)));
    }
  }
}
