import { HallmarkError, type Principal } from '@hallmark/contracts';
import type { EventStore, StoredEvent } from '@hallmark/event-store';
import { appendToAssetHistory, assetStream, type ProvenanceEventInput } from '@hallmark/provenance';
import type { SqlDatabase } from '@hallmark/sql';
import { foldObjectHistory, type ObjectState } from './object-history.ts';
import { findObjectId, saveObject } from './store/object-store.ts';

export interface ObjectRepositoryDeps {
  db: SqlDatabase;
  eventStore: EventStore;
  clock: () => Date;
}

/** An object's current state, from its stream (the truth), not from the read model. */
export async function loadObject(deps: ObjectRepositoryDeps, objectId: string): Promise<ObjectState | undefined> {
  return foldObjectHistory(await deps.eventStore.readStream(assetStream(objectId), { limit: 100_000 }));
}

export async function requireOwnedObject(deps: ObjectRepositoryDeps, owner: Principal, idOrSerial: string): Promise<ObjectState> {
  const id = await findObjectId(deps.db, owner, idOrSerial);
  const state = id ? await loadObject(deps, id) : undefined;
  if (!state) throw new HallmarkError('NOT_FOUND', `Object ${idOrSerial} was not found.`, { objectId: idOrSerial });
  return state;
}

/**
 * Decides on the current state and appends what `decide` returns at that state's version; when
 * another replica changed the object first, reloads and decides again (a few times). Then
 * refreshes the read model. `decide` throws to refuse.
 */
export async function changeObject(
  deps: ObjectRepositoryDeps,
  owner: Principal,
  idOrSerial: string,
  decide: (state: ObjectState) => ProvenanceEventInput[] | Promise<ProvenanceEventInput[]>,
): Promise<{ state: ObjectState; appended: StoredEvent[] }> {
  for (let attempt = 1; ; attempt += 1) {
    const before = await requireOwnedObject(deps, owner, idOrSerial);
    const inputs = await decide(before);
    try {
      const appended = await appendToAssetHistory(deps.eventStore, { assetId: before.id, owner }, inputs, {
        now: deps.clock,
        expectedVersion: before.version,
      });
      const after = (await loadObject(deps, before.id)) as ObjectState;
      await saveObject(deps.db, after, deps.clock());
      return { state: after, appended };
    } catch (error) {
      if (!(error instanceof HallmarkError && error.code === 'CONFLICT' && attempt < 5)) throw error;
    }
  }
}
