export type {
  AppendResult,
  CheckpointStore,
  EventPage,
  EventStore,
  EventSubscription,
  ExpectedVersion,
  JsonObject,
  NewEvent,
  StoredEvent,
  SubscribeOptions,
} from './event-store.ts';
export { createKurrentEventStore } from './kurrent-event-store.ts';
export { createSqlEventStore, type SqlEventStoreOptions } from './sql-event-store.ts';
export { isVersionConflict, versionConflict } from './version-conflict.ts';
