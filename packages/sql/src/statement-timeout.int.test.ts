import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSilentLink } from '../../../test/support/silent-link.ts';
import { createPostgresDatabase, isConnectionError, isStatementTimeout } from './postgres-database.ts';
import type { SqlDatabase } from './sql-database.ts';
import { createTestDatabase, type TestDatabase } from './test-database.ts';

// A PostgreSQL that stops answering on connections already open (a hung server, a network that
// drops packets): without a statement timeout a statement waits until TCP gives up (~15 minutes).

const statementTimeoutMs = 300;

describe('PostgreSQL adapter with a statement timeout', () => {
  let database: TestDatabase;
  let db: SqlDatabase | undefined;
  const closers: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    database = await createTestDatabase('statement_timeout');
  });
  afterAll(async () => {
    await database.drop();
  });
  afterEach(async () => {
    await db?.close();
    db = undefined;
    for (const close of closers.splice(0)) await close();
  });

  async function throughSilentLink() {
    const url = new URL(database.url);
    const link = await startSilentLink({ host: url.hostname, port: Number(url.port || 5432) });
    closers.push(() => link.close());
    url.hostname = '127.0.0.1';
    url.port = String(link.port);
    db = createPostgresDatabase({ connectionString: url.toString(), maxConnections: 2, statementTimeoutMs });
    return { link, db };
  }

  /** How a promise settles, and after how many milliseconds. */
  async function settled<T>(work: Promise<T>) {
    const started = performance.now();
    try {
      return { value: await work, ms: performance.now() - started };
    } catch (error) {
      return { error, ms: performance.now() - started };
    }
  }

  it('gives a statement up when the server goes silent on an open connection, as an outage, and works again once it answers', async () => {
    const { link, db } = await throughSilentLink();
    expect(await db.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);

    link.silence();
    const read = await settled(db.query('SELECT 2 AS two'));
    expect(isStatementTimeout(read.error)).toBe(true);
    expect(isConnectionError(read.error)).toBe(true);
    // Not sent again on a fresh connection: that would wait as long once more.
    expect(read.ms).toBeGreaterThanOrEqual(statementTimeoutMs - 20);
    expect(read.ms).toBeLessThan(statementTimeoutMs + 700);

    const transaction = await settled(db.transaction((tx) => tx.query('SELECT 3')));
    expect(isConnectionError(transaction.error)).toBe(true);
    expect(transaction.ms).toBeLessThan(6_000);

    link.speak();
    // The connections held while silent were given up; new ones answer.
    await expect(db.query('SELECT 4 AS four')).resolves.toEqual([{ four: 4 }]);
    await expect(db.transaction((tx) => tx.query('SELECT 5 AS five'))).resolves.toEqual([{ five: 5 }]);
  });

  it('cuts a statement slower than the timeout and frees its connection for the next, while a script (migrations) runs as long as it takes', async () => {
    db = createPostgresDatabase({ connectionString: database.url, maxConnections: 1, statementTimeoutMs });
    const slow = await settled(db.query('SELECT pg_sleep(2)'));
    expect(isStatementTimeout(slow.error)).toBe(true);
    expect(slow.ms).toBeLessThan(1_500);
    // One connection in the pool: the next statement does not wait behind the slow one.
    const next = await settled(db.query('SELECT 6 AS six'));
    expect(next.value).toEqual([{ six: 6 }]);
    expect(next.ms).toBeLessThan(1_000);

    const script = await settled(db.execScript('SELECT pg_sleep(0.6)'));
    expect(script.error).toBeUndefined();
    expect(script.ms).toBeGreaterThanOrEqual(600);
    await expect(db.transaction((tx) => tx.execScript('SELECT pg_sleep(0.6)'))).resolves.toBeUndefined();
  });
});
