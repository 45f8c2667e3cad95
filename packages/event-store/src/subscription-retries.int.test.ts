import { randomUUID } from 'node:crypto';
import { connectTestDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventStore, StoredEvent } from './event-store.ts';
import { createSqlEventStore } from './sql-event-store.ts';
import { ProjectionMovedOn } from './sql-projection.ts';

let database: Awaited<ReturnType<typeof connectTestDatabase>>;
let store: EventStore;

beforeAll(async () => {
  database = await connectTestDatabase('subscription_retries');
  store = await createSqlEventStore(database.db, { pollIntervalMs: 50 });
});

afterAll(async () => {
  await store.close();
  await database.drop();
});

/** Appends an event every 20 ms and wakes the subscription as often (writes notify it, readers wake it) until `stop`. */
function busyProduct(wake: () => void) {
  let running = true;
  const stream = `retries-${randomUUID()}`;
  const done = (async () => {
    for (let version = 0; running; version += 1) {
      await store.append(stream, [{ type: 'written', data: { version } }], { expectedVersion: version });
      wake();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  return async () => {
    running = false;
    await done;
  };
}

describe('a subscription whose batch fails', () => {
  it('tries it again after 1, 2, 4, then 5 s, however many writes and readers wake it, and goes on once it passes', async () => {
    let attempts = 0;
    let failing = true;
    const seen: StoredEvent[] = [];
    const subscription = store.subscribe({
      name: `retries-${randomUUID()}`,
      async handle(events) {
        attempts += 1;
        if (failing) throw new Error('this batch fails every time');
        seen.push(...events);
      },
      onError: () => {},
    });
    const stop = busyProduct(() => subscription.wake());
    await new Promise((resolve) => setTimeout(resolve, 4_500));
    // Tries at about 0, 1, 3 s (then 7 s): before, each notification and wake tried again, hundreds of times.
    expect(attempts).toBeGreaterThanOrEqual(2);
    expect(attempts).toBeLessThanOrEqual(4);
    failing = false;
    await stop();
    const deadline = Date.now() + 10_000;
    while (seen.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen.length).toBeGreaterThan(0);
    await subscription.stop();
  }, 30_000);

  it('goes on at the next wake when another replica moved the checkpoint (no failure, no pause)', async () => {
    let attempts = 0;
    let refused = 0;
    const subscription = store.subscribe({
      name: `moved-${randomUUID()}`,
      async handle() {
        attempts += 1;
        if (refused < 3) {
          refused += 1;
          throw new ProjectionMovedOn('moved on elsewhere');
        }
      },
      onError: () => {},
    });
    const stop = busyProduct(() => subscription.wake());
    const deadline = Date.now() + 1_500;
    while (attempts < 4 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    await stop();
    await subscription.stop();
    // Three refusals and a batch that passed, well within the 1 s pause a failure would take once.
    expect(attempts).toBeGreaterThanOrEqual(4);
  }, 30_000);
});
