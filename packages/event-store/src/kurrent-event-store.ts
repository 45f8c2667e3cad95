import { randomUUID } from 'node:crypto';
import {
  type AllStreamResolvedEvent,
  ANY,
  BACKWARDS,
  END,
  excludeSystemEvents,
  FORWARDS,
  jsonEvent,
  KurrentDBClient,
  NO_STREAM,
  type Position,
  type ResolvedEvent,
  START,
  StreamNotFoundError,
  WrongExpectedVersionError,
} from '@kurrent/kurrentdb-client';
import type { CheckpointStore, EventStore, JsonObject, StoredEvent } from './event-store.ts';
import { versionConflict } from './version-conflict.ts';

/** Streams that hold subscription checkpoints; subscriptions pass over their events. */
const checkpointStreamPrefix = 'hallmark-checkpoint-';

type RecordedEvent = NonNullable<ResolvedEvent['event']>;

function toStoredEvent(event: RecordedEvent, commitPosition: bigint | undefined): StoredEvent {
  return {
    eventId: event.id,
    streamId: event.streamId,
    streamVersion: Number(event.revision) + 1,
    globalPosition: Number(commitPosition ?? event.position?.commit ?? -1n),
    type: event.type,
    data: (event.isJson ? event.data : {}) as JsonObject,
    metadata: (event.metadata ?? {}) as JsonObject,
    recordedAt: event.created.toISOString(),
  };
}

function positionCursor(position: Position): string {
  return `${position.commit}:${position.prepare}`;
}
function parsePosition(cursor: string): Position {
  const [commit, prepare] = cursor.split(':');
  if (commit === undefined || prepare === undefined) throw new Error(`Not a KurrentDB cursor: ${cursor}`);
  return { commit: BigInt(commit), prepare: BigInt(prepare) };
}

function isUserEvent(resolved: AllStreamResolvedEvent): resolved is AllStreamResolvedEvent & { event: RecordedEvent } {
  return resolved.event !== undefined && !resolved.event.streamId.startsWith(checkpointStreamPrefix);
}

/**
 * The event store over KurrentDB (formerly EventStoreDB), chosen when HALLMARK_ESDB_URL is set.
 * KurrentDB orders its log itself, so it has no gap to guard against; its catch-up subscription
 * follows the $all stream from the checkpoint. Versions: our streamVersion is KurrentDB's revision + 1.
 */
export function createKurrentEventStore(connectionString: string): EventStore {
  const client = KurrentDBClient.connectionString(connectionString);

  const checkpoints: CheckpointStore = {
    async load(subscription) {
      try {
        for await (const resolved of client.readStream(checkpointStreamPrefix + subscription, {
          direction: BACKWARDS,
          fromRevision: END,
          maxCount: 1,
        })) {
          const data = resolved.event?.data as { cursor?: string } | undefined;
          if (data?.cursor) return data.cursor;
        }
      } catch (error) {
        if (error instanceof StreamNotFoundError) return undefined;
        throw error;
      }
      return undefined;
    },
    async save(subscription, cursor) {
      const stream = checkpointStreamPrefix + subscription;
      await client.appendToStream(stream, jsonEvent({ type: 'checkpoint', data: { cursor } }));
      await client.setStreamMetadata(stream, { maxCount: 1 });
    },
  };

  return {
    // KurrentDB cannot share a transaction with SQL: read models follow the append.
    atomicReadModels: false,
    async append(streamId, events, { expectedVersion, readModels }) {
      const streamState = expectedVersion === 'any' ? ANY : expectedVersion === 0 ? NO_STREAM : BigInt(expectedVersion - 1);
      const data = events.map((event) =>
        jsonEvent({
          id: event.eventId ?? randomUUID(),
          type: event.type,
          data: event.data,
          metadata: event.metadata ?? {},
        }),
      );
      try {
        const result = await client.appendToStream(streamId, data, { streamState });
        const nextExpectedVersion = Number(result.nextExpectedRevision) + 1;
        const stored = await this.readStream(streamId, { afterVersion: nextExpectedVersion - events.length });
        const appended = { nextExpectedVersion, events: stored };
        // KurrentDB cannot share a transaction with SQL: the read models follow the append.
        if (readModels) await readModels.db.transaction((tx) => readModels.write(tx, appended));
        return appended;
      } catch (error) {
        if (error instanceof WrongExpectedVersionError) {
          const actual = typeof error.actualState === 'bigint' ? Number(error.actualState) + 1 : 0;
          throw versionConflict(streamId, expectedVersion, actual);
        }
        throw error;
      }
    },

    async startStreams(streams, { readModels } = {}) {
      // KurrentDB appends to one stream per call; each new stream is checked with NO_STREAM.
      // Not atomic across streams: a failure part-way leaves the earlier ones started.
      for (const { streamId, events } of streams) await this.append(streamId, events, { expectedVersion: 0 });
      if (readModels) await readModels.db.transaction((tx) => readModels.write(tx));
    },

    async readStream(streamId, { afterVersion = 0, limit = 10_000 } = {}) {
      const events: StoredEvent[] = [];
      try {
        for await (const resolved of client.readStream(streamId, {
          direction: FORWARDS,
          fromRevision: afterVersion === 0 ? START : BigInt(afterVersion),
          maxCount: limit,
        })) {
          if (resolved.event) events.push(toStoredEvent(resolved.event, resolved.commitPosition));
        }
      } catch (error) {
        if (error instanceof StreamNotFoundError) return [];
        throw error;
      }
      return events;
    },

    async readLastEvent(streamId) {
      try {
        for await (const resolved of client.readStream(streamId, { direction: BACKWARDS, fromRevision: END, maxCount: 1 })) {
          if (resolved.event) return toStoredEvent(resolved.event, resolved.commitPosition);
        }
      } catch (error) {
        if (error instanceof StreamNotFoundError) return undefined;
        throw error;
      }
      return undefined;
    },

    async streamVersion(streamId) {
      return (await this.readLastEvent(streamId))?.streamVersion ?? 0;
    },

    async readAll({ after, limit = 500 } = {}) {
      const events: StoredEvent[] = [];
      let cursor = after ?? '0:0';
      for await (const resolved of client.readAll({
        direction: FORWARDS,
        fromPosition: after === undefined ? START : parsePosition(after),
        maxCount: limit + 1,
        filter: excludeSystemEvents(),
      })) {
        const position = resolved.event?.position;
        if (!position || positionCursor(position) === after) continue; // fromPosition is inclusive
        cursor = positionCursor(position);
        if (isUserEvent(resolved)) events.push(toStoredEvent(resolved.event, position.commit));
        if (events.length === limit) break;
      }
      return { events, cursor };
    },

    subscribe(options) {
      const store = options.checkpoints ?? checkpoints;
      let subscription: ReturnType<typeof client.subscribeToAll> | undefined;
      const running = (async () => {
        const from = await store.load(options.name);
        subscription = client.subscribeToAll({
          fromPosition: from === undefined ? START : parsePosition(from),
          filter: excludeSystemEvents(),
        });
        const wanted = options.eventTypes ? new Set(options.eventTypes) : undefined;
        for await (const resolved of subscription) {
          const position = resolved.event?.position;
          if (!position || !isUserEvent(resolved)) continue;
          const event = toStoredEvent(resolved.event, position.commit);
          for (;;) {
            try {
              await options.handle(wanted && !wanted.has(event.type) ? [] : [event], positionCursor(position));
              await store.save(options.name, positionCursor(position));
              break;
            } catch (error) {
              options.onError?.(error);
              await new Promise((resolve) => setTimeout(resolve, 1_000));
            }
          }
        }
      })();
      return {
        async stop() {
          await subscription?.unsubscribe();
          await running.catch(() => {});
        },
        // The live subscription hands over each event as it arrives; there is no wait to cut short.
        wake() {},
      };
    },

    async ping() {
      for await (const _ of client.readAll({ maxCount: 1, direction: BACKWARDS, fromPosition: END })) break;
    },

    close: () => client.dispose(),
  };
}
