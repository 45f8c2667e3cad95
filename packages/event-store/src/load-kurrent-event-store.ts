import type { EventStore } from './event-store.ts';

/**
 * The KurrentDB event store, its client loaded only when a process is configured for it: loading
 * `@kurrent/kurrentdb-client` and its gRPC stack costs every process about 0.3 s of CPU at start,
 * which the PostgreSQL and PGlite forms do not need.
 */
export async function loadKurrentEventStore(connectionString: string): Promise<EventStore> {
  const { createKurrentEventStore } = await import('./kurrent-event-store.ts');
  return createKurrentEventStore(connectionString);
}
