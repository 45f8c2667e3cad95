import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgliteDatabase } from './pglite-database.ts';
import type { SqlDatabase, SqlExecutor } from './sql-database.ts';

// The embedded form runs PGlite in a worker thread: everything the product does through the SQL
// port must behave as it does with PGlite on the calling thread.
describe('PGlite in a worker thread', () => {
  let folder: string;
  let db: SqlDatabase;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'pglite-worker-'));
    db = await createPgliteDatabase(join(folder, 'pglite'), { thread: 'worker' });
    await db.execScript(
      'CREATE TABLE things (id int PRIMARY KEY, bytes bytea, doc jsonb, at timestamptz, big int8); CREATE TABLE other (id int)',
    );
  });
  afterAll(async () => {
    await db.close();
    await rm(folder, { recursive: true, force: true });
  });

  it('passes parameters and returns rows with the types PGlite parses', async () => {
    await db.query('INSERT INTO things VALUES ($1, $2, $3, $4, $5)', [
      1,
      Buffer.from('hi'),
      { a: [1, 'b'] },
      new Date(0),
      2n ** 40n,
    ]);
    const [row] = await db.query('SELECT * FROM things WHERE id = $1', [1]);
    expect(row).toEqual({ id: 1, bytes: new Uint8Array([104, 105]), doc: { a: [1, 'b'] }, at: new Date(0), big: 2 ** 40 });
  });

  it('returns json and jsonb as PGlite parses them (sent as text, parsed on this thread), in statements and in one trip', async () => {
    const text = `SELECT $1::jsonb AS doc, $2::json AS raw, NULL::jsonb AS none, 'null'::jsonb AS literal_null,
                          '"a string"'::jsonb AS string, '[1, {"b": [true, null]}]'::jsonb AS list, 7 AS n, 'x'::text AS plain`;
    const params = [{ é: ['😀', 1.5, { deep: null }] }, '{"kept":  "as written"}'];
    const expected = {
      doc: { é: ['😀', 1.5, { deep: null }] },
      raw: { kept: 'as written' },
      none: null,
      literal_null: null,
      string: 'a string',
      list: [1, { b: [true, null] }],
      n: 7,
      plain: 'x',
    };
    expect(await db.query(text, params)).toEqual([expected]);
    const reference = await createPgliteDatabase(undefined, { thread: 'main' });
    try {
      expect(await reference.query(text, params)).toEqual([expected]);
    } finally {
      await reference.close();
    }
    const inOneTrip = await db.runInOneTrip?.([
      { text: 'SELECT 1 AS one', params: [] },
      { text, params },
      { text: "SELECT doc FROM things WHERE id = 1 UNION ALL SELECT '{}'::jsonb", params: [] },
    ]);
    expect(inOneTrip).toEqual({ committed: true, rows: [[{ one: 1 }], [expected], [{ doc: { a: [1, 'b'] } }, { doc: {} }]] });
  });

  it('answers columns that share a name as PGlite does (the last one), json or not, and a statement on an ended transaction with an error alone', async () => {
    const text = `SELECT '"123"'::jsonb AS x, '"true"'::jsonb AS x, '{}'::jsonb AS y, '42'::text AS y, '7'::text AS z, '[7]'::jsonb AS z`;
    const reference = await createPgliteDatabase(undefined, { thread: 'main' });
    try {
      const expected = await reference.query(text);
      expect(expected).toEqual([{ x: 'true', y: '42', z: [7] }]);
      expect(await db.query(text)).toEqual(expected);
    } finally {
      await reference.close();
    }
    let ended: SqlExecutor | undefined;
    await db.transaction(async (tx) => {
      ended = tx;
    });
    await expect(ended?.query('SELECT 1')).rejects.toThrow(/not open/);
    expect(await db.query('SELECT 2 AS still')).toEqual([{ still: 2 }]);
  });

  it("rejects with PostgreSQL's error fields, as PGlite on the main thread does", async () => {
    const error = await db.query('INSERT INTO things (id) VALUES (1)').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ code: '23505', constraint: 'things_pkey', message: expect.stringMatching(/duplicate key/) });
  });

  it('commits a transaction whose work resolves, with its result', async () => {
    const result = await db.transaction(async (tx) => {
      await tx.query('INSERT INTO things (id) VALUES (2)');
      return (await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM things'))[0]?.n;
    });
    expect(result).toBe(2);
    expect(await db.query('SELECT id FROM things WHERE id = 2')).toEqual([{ id: 2 }]);
  });

  it("rolls back a transaction whose work rejects, with the work's error", async () => {
    const work = db.transaction(async (tx) => {
      await tx.query('INSERT INTO things (id) VALUES (3)');
      throw new Error('changed my mind');
    });
    await expect(work).rejects.toThrow('changed my mind');
    expect(await db.query('SELECT id FROM things WHERE id = 3')).toEqual([]);
  });

  it('rolls back a transaction after a failed statement, and the database stays usable', async () => {
    const work = db.transaction(async (tx) => {
      await tx.query('INSERT INTO other (id) VALUES (1)');
      await tx.query('INSERT INTO things (id) VALUES (1)');
    });
    await expect(work).rejects.toMatchObject({ code: '23505' });
    expect(await db.query('SELECT * FROM other')).toEqual([]);
    expect(await db.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });

  it('runs transactions one at a time, and statements outside wait for the open one', async () => {
    const order: string[] = [];
    const first = db.transaction(async (tx) => {
      await tx.query('INSERT INTO other (id) VALUES (10)');
      await new Promise((resolve) => setTimeout(resolve, 50));
      order.push('first');
      await tx.query('INSERT INTO other (id) VALUES (11)');
    });
    const second = db.transaction(async (tx) => {
      order.push('second');
      return (await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM other WHERE id >= 10'))[0]?.n;
    });
    const outside = db.query<{ n: number }>('SELECT count(*)::int AS n FROM other WHERE id >= 10');
    await first;
    expect(await second).toBe(2);
    expect((await outside)[0]?.n).toBe(2);
    expect(order).toEqual(['first', 'second']);
  });

  it('runs statements in one trip: all committed with their rows, or none when an expectRows statement returns none', async () => {
    const runInOneTrip = db.runInOneTrip?.bind(db);
    if (!runInOneTrip) throw new Error('the worker database runs statements in one trip');
    const committed = await runInOneTrip([
      { text: 'INSERT INTO things (id) VALUES ($1), ($2)', params: [30, 31] },
      { text: 'SELECT id FROM things WHERE id >= $1 ORDER BY id', params: [30], expectRows: true },
    ]);
    expect(committed).toEqual({ committed: true, rows: [[], [{ id: 30 }, { id: 31 }]] });
    // An expectRows statement that returns none rolls back the statements before it.
    const refused = await runInOneTrip([
      { text: 'INSERT INTO things (id) VALUES ($1)', params: [32] },
      { text: 'UPDATE things SET big = 1 WHERE id = $1 RETURNING id', params: [999], expectRows: true },
      { text: 'INSERT INTO things (id) VALUES ($1)', params: [33] },
    ]);
    expect(refused).toEqual({ committed: false, emptyAt: 1 });
    // A failed statement rolls back and rejects with PostgreSQL's error; the database goes on.
    const failed = await runInOneTrip([
      { text: 'INSERT INTO things (id) VALUES ($1)', params: [34] },
      { text: 'INSERT INTO things (id) VALUES ($1)', params: [30] },
    ]).catch((caught: unknown) => caught);
    expect(failed).toMatchObject({ code: '23505', constraint: 'things_pkey' });
    expect(await db.query('SELECT id FROM things WHERE id >= 30 ORDER BY id')).toEqual([{ id: 30 }, { id: 31 }]);
  });

  it('runs scripts, in and out of transactions', async () => {
    await db.execScript('INSERT INTO other (id) VALUES (20); INSERT INTO other (id) VALUES (21)');
    await db.transaction((tx) => tx.execScript('INSERT INTO other (id) VALUES (22)'));
    expect(await db.query('SELECT id FROM other WHERE id >= 20 ORDER BY id')).toEqual([{ id: 20 }, { id: 21 }, { id: 22 }]);
  });

  it('delivers notifications to every listener of a channel until each stops', async () => {
    const first: string[] = [];
    const second: string[] = [];
    const stopFirst = await db.listen('changes', (payload) => first.push(payload));
    const stopSecond = await db.listen('changes', (payload) => second.push(payload));
    await db.transaction((tx) => tx.query(`NOTIFY changes, 'one'`));
    await expect.poll(() => second).toEqual(['one']);
    await stopFirst();
    await db.query(`NOTIFY changes, 'two'`);
    await expect.poll(() => second).toEqual(['one', 'two']);
    expect(first).toEqual(['one']);
    await stopSecond();
  });
});

// Statements and transactions are what requests wait for; trips carry batches and projections' pages.
describe('PGlite in a worker thread, its lines of waiting work', () => {
  // In memory: no data folder, so no WAL check of its own sends a statement in the middle.
  let db: SqlDatabase;
  beforeAll(async () => {
    db = await createPgliteDatabase(undefined, { thread: 'worker' });
  });
  afterAll(async () => {
    await db.close();
  });
  const tripsOf = (database: SqlDatabase) => {
    const runInOneTrip = database.runInOneTrip?.bind(database);
    if (!runInOneTrip) throw new Error('the worker database runs statements in one trip');
    return runInOneTrip;
  };

  it('runs the statements and transactions waiting ahead of the trips waiting, and a trip after at most 8 of them in a row', async () => {
    const runInOneTrip = tripsOf(db);
    const finished: string[] = [];
    const noted = (name: string, work: Promise<unknown>) => work.then(() => finished.push(name));
    let waiting: Array<Promise<unknown>> = [];
    // An open transaction holds PGlite: everything sent meanwhile waits in its line.
    await db.transaction(async (tx) => {
      waiting = [
        ...[1, 2, 3].map((trip) => noted(`trip ${trip}`, runInOneTrip([{ text: 'SELECT $1::int AS n', params: [trip] }]))),
        ...Array.from({ length: 9 }, (_, index) => noted(`statement ${index + 1}`, db.query('SELECT $1::int AS n', [index]))),
        noted(
          'transaction',
          db.transaction((other) => other.query('SELECT 1')),
        ),
      ];
      // Answered once the worker has taken every message sent before it.
      await tx.query('SELECT 1');
    });
    await Promise.all(waiting);
    expect(finished).toEqual([
      ...Array.from({ length: 8 }, (_, index) => `statement ${index + 1}`),
      'trip 1',
      'statement 9',
      'transaction',
      'trip 2',
      'trip 3',
    ]);
  });

  it('takes in what came while a trip ran before it starts the next: a statement sent after a trip still goes ahead of it', async () => {
    const runInOneTrip = tripsOf(db);
    const finished: string[] = [];
    const noted = (name: string, work: Promise<unknown>) => work.then(() => finished.push(name));
    // ~80 ms of PGlite's thread: the two after it are sent while it runs, or taken with it.
    const slow = noted(
      'slow trip',
      runInOneTrip([{ text: 'SELECT count(*) FROM generate_series(1, $1::int)', params: [300_000] }]),
    );
    const trip = noted('trip', runInOneTrip([{ text: 'SELECT 1', params: [] }]));
    const statement = noted('statement', db.query('SELECT 2'));
    await Promise.all([slow, trip, statement]);
    expect(finished.indexOf('statement')).toBeLessThan(finished.indexOf('trip'));
  });

  it('closes once what was sent before the close has run, and refuses what is sent after it', async () => {
    const other = await createPgliteDatabase(undefined, { thread: 'worker' });
    const runInOneTrip = tripsOf(other);
    const sent = [
      runInOneTrip([{ text: 'SELECT count(*)::int AS n FROM generate_series(1, $1::int)', params: [100_000] }]),
      runInOneTrip([{ text: 'SELECT 1 AS one', params: [] }]),
      other.query('SELECT 2 AS two'),
    ];
    const closed = other.close();
    // Sent after the close: refused, not run before it.
    const late = other.query('SELECT 4').catch((error: unknown) => error);
    expect(await Promise.all(sent)).toEqual([
      { committed: true, rows: [[{ n: 100_000 }]] },
      { committed: true, rows: [[{ one: 1 }]] },
      [{ two: 2 }],
    ]);
    await closed;
    expect(await late).toMatchObject({ message: expect.stringMatching(/closed/) });
    await expect(other.query('SELECT 3')).rejects.toThrow(/closed/);
  });
});

describe('PGlite in a worker thread, on disk', () => {
  it('keeps its data across a close and a new start, and refuses statements once closed', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'pglite-worker-'));
    try {
      const first = await createPgliteDatabase(join(folder, 'pglite'), { thread: 'worker' });
      await first.execScript('CREATE TABLE kept (id int)');
      await first.query('INSERT INTO kept VALUES (7)');
      await first.close();
      await expect(first.query('SELECT 1')).rejects.toThrow(/closed/);
      const second = await createPgliteDatabase(join(folder, 'pglite'), { thread: 'worker' });
      expect(await second.query('SELECT id FROM kept')).toEqual([{ id: 7 }]);
      await second.close();
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});

// HALLMARK_REPORT_PGLITE (benchmarks): PGlite's time by statement, written every 5 s and at close.
describe('PGlite in a worker thread, reporting its time by statement', () => {
  it('writes each statement with its count and time, the lock and its statement as the statement', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'pglite-report-'));
    const report = join(folder, 'report-{pid}.txt');
    const before = process.env.HALLMARK_REPORT_PGLITE;
    process.env.HALLMARK_REPORT_PGLITE = report;
    try {
      const db = await createPgliteDatabase(join(folder, 'pglite'), { thread: 'worker' });
      process.env.HALLMARK_REPORT_PGLITE = before;
      if (before === undefined) delete process.env.HALLMARK_REPORT_PGLITE;
      await db.execScript('CREATE TABLE counted (id int)');
      for (let id = 0; id < 3; id += 1) await db.query('INSERT INTO counted VALUES ($1)', [id]);
      await db.runInOneTrip?.([
        { text: 'SELECT pg_advisory_xact_lock(1)', params: [] },
        { text: 'SELECT count(*) FROM counted', params: [] },
      ]);
      await db.close();
      const text = await readFile(report.replace('{pid}', String(process.pid)), 'utf8');
      expect(text).toMatch(/^ +\d+ ms in all\n/);
      expect(text).toMatch(/ms +3× query: INSERT INTO counted VALUES \(\$1\)\n/);
      expect(text).toMatch(/ms +1× script: SELECT count\(\*\) FROM counted\n/);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
