import { HallmarkError } from '@hallmark/contracts';
import type { EventStore } from '@hallmark/event-store';
import { assetStream } from '@hallmark/provenance';
import type { SqlDatabase } from '@hallmark/sql';
import { projectedTreeSize } from './store/merkle-store.ts';

/** What a read found of an asset's tree: its id (an alias resolved) and how many events it holds. */
export interface SeenTree {
  assetId: string;
  treeSize: number;
}

export interface ProjectionWaitDeps {
  db: SqlDatabase;
  eventStore: EventStore;
  /** Asks the local projection to read on at once (cuts its linger or idle wait short). */
  wakeProjection(): void;
  /** How long a read may wait for the projection before it answers 503 (HALLMARK_PROJECTION_WAIT_MS). */
  timeoutMs: number;
  /** How often a waiting read looks again without news from the local projection (another replica may project). */
  pollMs?: number;
}

export interface ProjectionWait {
  /**
   * Runs `read` (a read of the Merkle projection) until what it saw of the asset holds every event
   * the event store held when the call began, so an answer never leaves out a write that was
   * already acknowledged. `treeOf` says what the read found for the caller (undefined: nothing).
   * Costs one cheap version lookup, run beside the read, when the asset is already projected.
   * Fails with SERVICE_UNAVAILABLE (details.retryAfterSeconds) when the projection has not caught
   * up within `timeoutMs`: never an older answer.
   */
  read<T>(idOrAlias: string, read: () => Promise<T>, treeOf: (value: T) => SeenTree | undefined): Promise<T>;
  /** Call after each projected batch: waiting reads look again at once. */
  projected(): void;
}

/**
 * Read your writes over an asynchronous projection: compare the projection's size of the asset
 * with the stream's version in the event store, and while it is behind, wake the projection and
 * wait for its next batch (or a short poll, for a batch projected by another replica).
 */
export function createProjectionWait(deps: ProjectionWaitDeps): ProjectionWait {
  const pollMs = deps.pollMs ?? 25;
  const waiting = new Set<() => void>();

  const nextBatch = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        waiting.delete(done);
        resolve();
      }
      waiting.add(done);
    });

  return {
    async read<T>(idOrAlias: string, read: () => Promise<T>, treeOf: (value: T) => SeenTree | undefined): Promise<T> {
      const [first, namedVersion] = await Promise.all([read(), deps.eventStore.streamVersion(assetStream(idOrAlias))]);
      let value = first;
      const found = treeOf(value);
      const assetId = found?.assetId ?? idOrAlias;
      // Found by its alias (an auction object's service serial): the stream is named by the id.
      const target = assetId === idOrAlias ? namedVersion : await deps.eventStore.streamVersion(assetStream(assetId));
      // No stream of that name: an unknown asset, answered as such by the handler.
      if (target === 0) return value;
      const deadline = Date.now() + deps.timeoutMs;
      for (;;) {
        const tree = treeOf(value);
        if (tree && tree.treeSize >= target) return value;
        // Not found for the caller: another owner's asset, or not projected when `read` ran. Once the
        // projection holds it (it may have meanwhile), a new read gives the answer: the tree or none.
        if (!tree && (await projectedTreeSize(deps.db, assetId)) >= target) return read();
        const left = deadline - Date.now();
        if (left <= 0) {
          throw new HallmarkError(
            'SERVICE_UNAVAILABLE',
            `The newest events of asset ${idOrAlias} are not in its Merkle log yet; retry in a second.`,
            { assetId: idOrAlias, retryAfterSeconds: 1 },
          );
        }
        deps.wakeProjection();
        await nextBatch(Math.min(pollMs, left));
        value = await read();
      }
    },

    projected() {
      for (const done of [...waiting]) done();
    },
  };
}
