import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runMigrations } from './migrations.ts';
import { createPostgresDatabase, isConnectionError, isPoolWaitTimeout } from './postgres-database.ts';
import type { SqlDatabase } from './sql-database.ts';
import { createTestDatabase, type TestDatabase, testServerUrl } from './test-database.ts';

// What a PostgreSQL failover or restart does to a service: every connection to its database is
// terminated (57P01). Only the backends of this suite's own database are touched.

async function backendCount(database: string): Promise<number> {
  const client = new pg.Client({ connectionString: testServerUrl });
  await client.connect();
  try {
    const result = await client.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1', [database]);
    return Number(result.rows[0]?.n);
  } finally {
    await client.end();
  }
}

const waitFor = async (condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
};

describe('PostgreSQL adapter when the database terminates its connections', () => {
  let database: TestDatabase;
  let db: SqlDatabase;
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => {
    uncaught.push(error);
  };

  beforeAll(async () => {
    database = await createTestDatabase('connection_loss');
  });
  afterAll(async () => {
    await database.drop();
  });
  beforeEach(() => {
    uncaught.length = 0;
    process.on('uncaughtException', onUncaught);
    db = createPostgresDatabase({ connectionString: database.url, maxConnections: 4 });
  });
  afterEach(async () => {
    await db.close();
    process.off('uncaughtException', onUncaught);
  });

  it('rejects a transaction cut off mid-way with the connection error, without crashing, and the next one succeeds', async () => {
    await db.execScript('CREATE TABLE IF NOT EXISTS items (id int PRIMARY KEY)');
    // Idle pooled connections too: they are terminated alongside.
    await Promise.all([db.query('SELECT 1'), db.query('SELECT 2'), db.query('SELECT 3')]);

    let inside!: () => void;
    const isInside = new Promise<void>((resolve) => {
      inside = resolve;
    });
    let mayGoOn!: () => void;
    const goOn = new Promise<void>((resolve) => {
      mayGoOn = resolve;
    });
    const cutOff = db.transaction(async (tx) => {
      await tx.query('INSERT INTO items (id) VALUES (1)');
      inside();
      await goOn;
      await tx.query('INSERT INTO items (id) VALUES (2)');
    });
    const outcome = cutOff.then(
      () => undefined,
      (error: unknown) => error,
    );
    await isInside;
    expect(await database.terminateBackends()).toBeGreaterThanOrEqual(1);
    // Let the termination reach the client while it sits idle in its transaction.
    await new Promise((resolve) => setTimeout(resolve, 300));
    mayGoOn();

    const error = await outcome;
    expect(error).toBeInstanceOf(Error);
    expect((error as { code?: string }).code).toBe('57P01');
    expect(uncaught).toEqual([]);

    // The next transaction and query run on fresh connections; the cut-off insert was rolled back.
    await db.transaction(async (tx) => {
      await tx.query('INSERT INTO items (id) VALUES (3)');
    });
    const rows = await db.query<{ id: number }>('SELECT id FROM items ORDER BY id');
    expect(rows.map((row) => row.id)).toEqual([3]);
    expect(uncaught).toEqual([]);
  });

  it('retries a read cut off mid-statement once on a fresh connection', async () => {
    const read = db.query<{ answer: number }>('SELECT pg_sleep(1.5), 42 AS answer').then(
      (rows) => rows,
      (error: unknown) => error,
    );
    await waitFor(async () => (await backendCount(database.name)) >= 1, 'the read to reach the server');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await database.terminateBackends()).toBeGreaterThanOrEqual(1);
    expect(await read).toEqual([{ pg_sleep: '', answer: 42 }]);
    expect(uncaught).toEqual([]);
  });

  it('does not retry a write cut off mid-statement: it rejects with the connection error', async () => {
    await db.execScript('CREATE TABLE IF NOT EXISTS writes (id int)');
    const write = db.query('INSERT INTO writes (id) SELECT 1 FROM pg_sleep(1.5)').then(
      () => undefined,
      (error: unknown) => error,
    );
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await database.terminateBackends()).toBeGreaterThanOrEqual(1);
    const error = await write;
    expect((error as { code?: string }).code).toBe('57P01');
    expect(await db.query('SELECT id FROM writes')).toEqual([]);
    expect(uncaught).toEqual([]);
  });

  it('keeps a LISTEN going across the termination: it reconnects, listens again and wakes its listener', async () => {
    const payloads: string[] = [];
    const stop = await db.listen('loss_channel', (payload) => payloads.push(payload));
    await db.query(`SELECT pg_notify('loss_channel', 'before')`);
    await waitFor(() => payloads.includes('before'), 'the first notification');

    expect(await database.terminateBackends()).toBeGreaterThanOrEqual(1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(uncaught).toEqual([]);

    // After it listens again, notifications arrive as before. Notify until one does: the
    // reconnection takes a moment and a notification sent before it is not queued for it.
    await waitFor(
      async () => {
        await db.query(`SELECT pg_notify('loss_channel', 'after')`);
        return payloads.includes('after');
      },
      'a notification after the termination',
      15_000,
    );
    // And it was woken once on its return, to look for what it missed.
    expect(payloads).toContain('');
    await stop();
    expect(uncaught).toEqual([]);
  });

  it('survives a termination during migrations under the lock, and a rerun applies them', async () => {
    const set = {
      module: 'loss',
      migrations: [{ version: 1, name: 'slow', sql: 'SELECT pg_sleep(1.5); CREATE TABLE slow_made (id int);' }],
    };
    const first = runMigrations(db, set).then(
      () => undefined,
      (error: unknown) => error,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    await database.terminateBackends();
    expect(await first).toBeInstanceOf(Error);
    expect(await runMigrations(db, set)).toEqual([1]);
    expect(uncaught).toEqual([]);
  });

  it('fails its ping (what readiness asks) while the database refuses connections, and passes once it takes them', async () => {
    await db.ping();
    await database.allowConnections(false);
    try {
      await database.terminateBackends();
      await expect(db.ping()).rejects.toThrow();
    } finally {
      await database.allowConnections(true);
    }
    await db.ping();
    expect(uncaught).toEqual([]);
  });
});

describe('PostgreSQL adapter with every pooled connection busy', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase('pool_wait');
  });
  afterAll(async () => {
    await database.drop();
  });

  it('refuses a statement that waited 5 s for a connection as saturation (a 503 to retry), and the pool serves again once one is free', async () => {
    const db = createPostgresDatabase({ connectionString: database.url, maxConnections: 1 });
    try {
      let release!: () => void;
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      const holding = db.transaction(async (tx) => {
        await tx.query('SELECT 1');
        await released;
      });
      const started = Date.now();
      const waited = await db.query('SELECT 2').then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(Date.now() - started).toBeGreaterThanOrEqual(4_500);
      expect(isPoolWaitTimeout(waited), String(waited)).toBe(true);
      // Not a lost connection: nothing is retried or dropped for it.
      expect(isConnectionError(waited)).toBe(false);
      release();
      await holding;
      expect(await db.query<{ n: number }>('SELECT 3 AS n')).toEqual([{ n: 3 }]);
    } finally {
      await db.close();
    }
  });
});
