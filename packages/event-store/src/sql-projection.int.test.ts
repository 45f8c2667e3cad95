import { createPgliteDatabase, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from './event-store.ts';
import { createSqlProjection, ProjectionMovedOn } from './sql-projection.ts';

// A write-only projection on PGlite in its worker thread sends the lock, its statements and the
// checkpoint in one round trip (runInOneTrip), never a transaction held across the event loop's
// turns, and keeps createSqlProjection's exactly-once: rows and checkpoint commit together.

const event = (n: number): StoredEvent => ({
  eventId: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  streamId: `s-${n}`,
  streamVersion: 1,
  globalPosition: n,
  type: 'noted',
  data: { n },
  metadata: {},
  recordedAt: new Date(0).toISOString(),
});

describe('a write-only SQL projection on PGlite in its worker thread', () => {
  let db: SqlDatabase;
  /** The worker database, with every one-trip batch recorded and transactions refused. */
  let watched: SqlDatabase;
  const trips: string[][] = [];
  beforeAll(async () => {
    db = await createPgliteDatabase(undefined, { thread: 'worker' });
    await db.execScript('CREATE TABLE cps (name text PRIMARY KEY, cursor text NOT NULL); CREATE TABLE noted (n int PRIMARY KEY)');
    const runInOneTrip = db.runInOneTrip?.bind(db);
    if (!runInOneTrip) throw new Error('the worker database runs statements in one trip');
    watched = {
      ...db,
      runInOneTrip: (statements) => {
        trips.push(statements.map((statement) => statement.text.split(' ').slice(0, 3).join(' ')));
        return runInOneTrip(statements);
      },
      transaction: () => Promise.reject(new Error('a write-only projection opened a transaction')),
    };
  });
  afterAll(async () => {
    await db.close();
  });

  const noting = (
    name: string,
    project = async (sql: Parameters<Parameters<typeof createSqlProjection>[0]['project']>[0], events: StoredEvent[]) => {
      await sql.query('INSERT INTO noted (n) SELECT unnest($1::int[])', [events.map((stored) => stored.data.n)]);
    },
  ) => createSqlProjection({ db: watched, name, checkpointTable: 'cps', project, writeOnly: true });

  it('writes rows and checkpoint in one trip, and refuses a batch whose checkpoint moved, writing none of it', async () => {
    const first = noting('p');
    await first.checkpoints.load('p');
    await first.handle([event(1), event(2)], 'c1');
    // The lock, the checkpoint (checked before any row), the rows.
    expect(trips.at(-1)).toEqual(["SELECT set_config('synchronous_commit', 'off',", 'INSERT INTO cps', 'INSERT INTO noted']);
    await first.handle([event(3)], 'c2');
    expect(trips.at(-1)?.[1]).toBe('UPDATE cps SET');
    expect(await db.query('SELECT n FROM noted ORDER BY n')).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(await db.query('SELECT cursor FROM cps')).toEqual([{ cursor: 'c2' }]);

    // Another replica loaded the checkpoint c2 too, but this one moved it to c3 first.
    const stale = noting('p');
    await stale.checkpoints.load('p');
    await first.handle([event(4)], 'c3');
    await expect(stale.handle([event(5)], 'c4')).rejects.toBeInstanceOf(ProjectionMovedOn);
    expect(await db.query('SELECT n FROM noted ORDER BY n')).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
    expect(await db.query('SELECT cursor FROM cps')).toEqual([{ cursor: 'c3' }]);
  });

  it('rolls back the whole batch when a statement fails, checkpoint included', async () => {
    const projection = noting('q');
    await projection.checkpoints.load('q');
    // n = 1 is taken (the test above).
    await expect(projection.handle([event(100), event(1)], 'q1')).rejects.toMatchObject({ code: '23505' });
    expect(await db.query('SELECT n FROM noted WHERE n = 100')).toEqual([]);
    expect(await db.query(`SELECT cursor FROM cps WHERE name = 'q'`)).toEqual([]);
  });

  it('leaves the checkpoint of a batch with no events for a later write, at most idleCheckpointMs', async () => {
    let projected = 0;
    const quiet = createSqlProjection({
      db: watched,
      name: 'quiet',
      checkpointTable: 'cps',
      project: async (sql, events) => {
        await sql.query('INSERT INTO noted (n) SELECT unnest($1::int[])', [events.map((stored) => stored.data.n)]);
      },
      writeOnly: true,
      idleCheckpointMs: 300,
      onProjected: () => {
        projected += 1;
      },
    });
    const stored = async () => (await db.query<{ cursor: string }>(`SELECT cursor FROM cps WHERE name = 'quiet'`))[0]?.cursor;
    await quiet.checkpoints.load('quiet');
    // The first checkpoint is written at once, whatever the batch.
    await quiet.handle([], 'k1');
    expect(await stored()).toBe('k1');
    const tripsBefore = trips.length;
    await quiet.handle([], 'k2');
    await quiet.handle([], 'k3');
    expect(trips.length).toBe(tripsBefore);
    expect(await stored()).toBe('k1');
    // A batch with events writes its own, later checkpoint (checked against k1, the one stored).
    await quiet.handle([event(300)], 'k4');
    expect(await stored()).toBe('k4');
    expect(projected).toBe(1);
    // Past idleCheckpointMs an empty batch's checkpoint is written, and wakes no reader.
    await quiet.handle([], 'k5');
    expect(await stored()).toBe('k4');
    await new Promise((resolve) => setTimeout(resolve, 350));
    await quiet.handle([], 'k6');
    expect(await stored()).toBe('k6');
    expect(projected).toBe(1);
    // Another replica moved the checkpoint while this one skipped: its next write is refused.
    await quiet.handle([], 'k7');
    await db.query(`UPDATE cps SET cursor = 'elsewhere' WHERE name = 'quiet'`);
    await expect(quiet.handle([event(301)], 'k8')).rejects.toBeInstanceOf(ProjectionMovedOn);
    expect(await db.query('SELECT n FROM noted WHERE n = 301')).toEqual([]);
  });

  it('refuses a write-only projection that runs a script', async () => {
    const scripted = noting('r', async (sql) => {
      await sql.execScript('DELETE FROM noted');
    });
    await scripted.checkpoints.load('r');
    await expect(scripted.handle([event(200)], 'r1')).rejects.toThrow(/write-only/);
    expect((await db.query('SELECT count(*)::int AS n FROM noted'))[0]).toEqual({ n: 5 });
  });
});
