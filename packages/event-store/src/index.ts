export type {
  AppendOptions,
  AppendResult,
  CheckpointStore,
  EventPage,
  EventStore,
  EventSubscription,
  ExpectedVersion,
  JsonObject,
  KeyedRowsInsert,
  NewEvent,
  ReadModelWrite,
  StoredEvent,
  SubscribeOptions,
} from './event-store.ts';
export { loadKurrentEventStore } from './load-kurrent-event-store.ts';
export { createSqlEventStore, type SqlEventStoreOptions } from './sql-event-store.ts';
export { createSqlProjection, ProjectionMovedOn, projectionLockKey, type SqlProjection } from './sql-projection.ts';
export { isVersionConflict, versionConflict } from './version-conflict.ts';
