import { connectTestDatabase, createPgliteDatabase, type SqlDatabase } from '@hallmark/sql';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createCheckpointClock } from './checkpoint-clock.ts';
import { migrateCompliance } from './store/merkle-store.ts';

// The times checkpoints carry (checkpoint-clock.ts): never before one signed already, a clock stepped
// back, another replica's clock or a restart notwithstanding (within the lease across replicas), at
// about one write a second per replica rather than one a checkpoint.

const t0 = Date.parse('2032-06-15T11:00:00.000Z');
const hour = 3_600_000;
const iso = (time: number) => new Date(time).toISOString();

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

// A replica renewed only when its clock neared the lease it last read, which a replica whose clock
// runs ahead may have written: the one behind then dated checkpoints at what it read for the whole
// skew. And a signing past the lease took the time of a renewal asked for earlier, handing out a time
// beyond every lease in the database. Two replicas' clocks differ here, which the distributed form
// in the end-to-end tests cannot arrange.
describe('checkpoint clock across replicas and restarts (a review of 1e49dbf: both failed before)', () => {
  let db: SqlDatabase;

  beforeEach(async () => {
    db = await createPgliteDatabase();
    await migrateCompliance(db);
  });
  afterEach(async () => {
    await db?.close();
  });

  it('a replica 5 s behind dates no checkpoint more than about a second before one another replica signed', async () => {
    // Two compliance-service replicas on one database; one host's clock runs 5 s ahead of the other's.
    let elapsed = 0;
    const ahead = createCheckpointClock(db, () => new Date(t0 + 5_000 + elapsed));
    const behind = createCheckpointClock(db, () => new Date(t0 + elapsed));
    let latestSigned = Number.NEGATIVE_INFINITY;
    let worst = { lagMs: 0, behindAt: 0, aheadAt: 0 };
    // Five seconds of checkpoints, each replica signing one every 100 ms, the fast one first.
    for (elapsed = 0; elapsed <= 5_000; elapsed += 100) {
      // Real time passes too (a lease renewal is a round trip): 100 ms of these clocks in 5 ms.
      await new Promise((resolve) => setTimeout(resolve, 5));
      latestSigned = Math.max(latestSigned, (await ahead()).getTime());
      const byBehind = (await behind()).getTime();
      if (latestSigned - byBehind > worst.lagMs) {
        worst = { lagMs: latestSigned - byBehind, behindAt: byBehind, aheadAt: latestSigned };
      }
    }
    expect(
      worst.lagMs,
      `the replica behind dated a checkpoint ${iso(worst.behindAt)}, after the other had signed one at ${iso(worst.aheadAt)}`,
    ).toBeLessThanOrEqual(1_500);
  });

  it('a checkpoint signed while a stalled lease renewal runs stays within the lease (a restart after a step back)', async () => {
    let now = t0;
    let hold: Promise<void> | undefined;
    let release: () => void = () => {};
    // The database as the replica sees it, with its lease writes held while `hold` is set (a stall).
    const stalling = {
      ...db,
      query: async (text: string, params?: readonly unknown[]) => {
        if (hold && text.startsWith('UPDATE checkpoint_clock')) await hold;
        return db.query(text, params);
      },
    } as SqlDatabase;
    const replica = createCheckpointClock(stalling, () => new Date(now));
    expect((await replica()).getTime()).toBe(t0); // lease written: t0 + 1 s
    hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    now = t0 + 600;
    // Past half the lease: a renewal starts (to t0 + 1.6 s), and stalls.
    expect((await replica()).getTime()).toBe(t0 + 600);
    now = t0 + 10_000; // ten seconds later, the renewal still stalled
    const pending = replica(); // past the lease: waits for the renewal in flight
    hold = undefined;
    release();
    const signed = (await pending).getTime();
    const [row] = await db.query<{ lease_until: Date | string }>('SELECT lease_until FROM checkpoint_clock');
    const lease = new Date(row?.lease_until ?? 0).getTime();
    // The replica restarts, its clock stepped back nine seconds (NTP correcting the host).
    now = t0 + 1_000;
    const afterRestart = (await createCheckpointClock(db, () => new Date(now))()).getTime();
    expect(
      afterRestart,
      `signed ${iso(signed)}, the lease at ${iso(lease)}; after the restart ${iso(afterRestart)}`,
    ).toBeGreaterThanOrEqual(signed - 1_000);
  });
});
