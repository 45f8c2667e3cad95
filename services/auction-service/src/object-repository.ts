import { HallmarkError, type Principal } from '@hallmark/contracts';
import { type EventStore, isVersionConflict, type StoredEvent } from '@hallmark/event-store';
import { appendToAssetHistory, assetStream, type ProvenanceEventInput } from '@hallmark/provenance';
import type { SqlDatabase, SqlExecutor } from '@hallmark/sql';
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
 * Decides on the current state and appends what `decide` returns at that state's version, with the
 * object's read model in the same transaction; when another replica changed the object first,
 * reloads and decides again (a few times). `decide` throws to refuse; no events is no change.
 * Answers the object's state, what was appended and its whole history as read (with the appended).
 * `checkWritten`, where the event store writes read models in the append's transaction, runs in it
 * after the object's row: it may read what other objects' rows hold now and throw to refuse, which
 * stores nothing (a limit across objects, kept however many changes run at once).
 */
export async function changeObject(
  deps: ObjectRepositoryDeps,
  owner: Principal,
  idOrSerial: string,
  decide: (state: ObjectState) => ProvenanceEventInput[] | Promise<ProvenanceEventInput[]>,
  options: { checkWritten?: (sql: SqlExecutor) => Promise<void> } = {},
): Promise<{ state: ObjectState; appended: StoredEvent[]; history: StoredEvent[] }> {
  const checkWritten = deps.eventStore.atomicReadModels ? options.checkWritten : undefined;
  for (let attempt = 1; ; attempt += 1) {
    const { state: before, events } = await requireOwnedHistory(deps, owner, idOrSerial);
    const inputs = await decide(before);
    if (inputs.length === 0) {
      // Nothing to record (an Idempotency-Key's event stored already): the state as it is. Its read
      // model is written again (version-guarded: a no-op when current), which repairs a row left
      // behind by a release that wrote it after the append rather than with it.
      await saveObject(deps.db, before, deps.clock()).catch(() => {});
      return { state: before, appended: [], history: events };
    }
    try {
      let after: ObjectState | undefined;
      const appended = await appendToAssetHistory(deps.eventStore, { assetId: before.id, owner }, inputs, {
        now: deps.clock,
        expectedVersion: before.version,
        // The read model in the append's transaction (SQL stores): a process killed between the two
        // can leave neither half alone. Before, it was written after the commit, and a kill there
        // left the dashboard (status, photos, photo_bytes) behind the stream for good.
        readModels: {
          db: deps.db,
          async write(sql, result) {
            // Appended at the version decided on: the history is the events read plus these.
            after = foldObjectHistory([...events, ...result.events]) as ObjectState;
            await saveObject(sql, after, deps.clock());
            await checkWritten?.(sql);
          },
        },
      });
      if (!after) throw new Error('The object’s append wrote no read model.');
      return { state: after, appended, history: [...events, ...appended] };
    } catch (error) {
      // Only a version conflict is retried: a refusal decided on the state is an answer.
      if (!isVersionConflict(error) || attempt >= 20) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 * attempt)));
    }
  }
}
