import { connectTestDatabase, createPgliteDatabase, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCheckpointClock } from './checkpoint-clock.ts';
import { migrateCompliance } from './store/merkle-store.ts';

// The times checkpoints carry (checkpoint-clock.ts): never before one signed already, a clock stepped
// back, another replica's clock or a restart notwithstanding (within the lease across replicas), at
// about one write a second per replica rather than one a checkpoint.

const t0 = Date.parse('2032-06-15T11:00:00.000Z');
const hour = 3_600_000;

for (const kind of ['postgresql', 'pglite'] as const) {
  describe(`checkpoint clock (${kind})`, () => {
    let db: SqlDatabase;
    let drop: () => Promise<void>;
    let writes = 0;
    let counted: SqlDatabase;

    beforeAll(async () => {
      if (kind === 'postgresql') {
        const database = await connectTestDatabase('checkpoint_clock');
        db = database.db;
        drop = () => database.drop();
      } else {
        db = await createPgliteDatabase();
        drop = () => db.close();
      }
      await migrateCompliance(db);
      counted = {
        ...db,
        query: (text: string, params?: readonly unknown[]) => {
          if (text.startsWith('UPDATE checkpoint_clock')) writes++;
          return db.query(text, params);
        },
      } as SqlDatabase;
    });
    afterAll(async () => {
      await drop?.();
    });

    it('dates each checkpoint by the clock, writing the lease about once a second, not once a checkpoint', async () => {
      let now = t0;
      const signingTime = createCheckpointClock(counted, () => new Date(now));
      const times: number[] = [];
      for (let i = 0; i < 1_000; i++) {
        now = t0 + i * 2; // 2 s of checkpoints, 500 a second
        times.push((await signingTime()).getTime());
      }
      expect(times).toEqual(Array.from({ length: 1_000 }, (_, i) => t0 + i * 2));
      expect(writes).toBeGreaterThanOrEqual(2);
      expect(writes).toBeLessThanOrEqual(5);
    });

    it('never dates a checkpoint before one signed already: a step back, another replica, a restart', async () => {
      let now = t0 + 10_000;
      const replicaA = createCheckpointClock(db, () => new Date(now));
      const signedByA = (await replicaA()).getTime();
      expect(signedByA).toBe(t0 + 10_000);
      // A's clock steps back an hour: its checkpoints keep the time it signed last until it catches up.
      now = t0 + 10_000 - hour;
      expect((await replicaA()).getTime()).toBe(signedByA);
      // Another replica whose clock is an hour behind, and A restarted after its step: no earlier than A's lease allows.
      const behind = () => new Date(t0 + 10_000 - hour);
      for (const replica of [createCheckpointClock(db, behind), createCheckpointClock(db, behind)]) {
        expect((await replica()).getTime()).toBeGreaterThanOrEqual(signedByA);
      }
      // Once the clock passes the last time signed, checkpoints carry the clock again.
      now = t0 + 20_000;
      expect((await replicaA()).getTime()).toBe(t0 + 20_000);
    });
  });
}
