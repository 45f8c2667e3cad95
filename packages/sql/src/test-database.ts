import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createPostgresDatabase } from './postgres-database.ts';
import type { SqlDatabase } from './sql-database.ts';

/** The server the integration tests use; a database of their own is created on it per suite. */
export const testServerUrl = process.env.HALLMARK_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestDatabase {
  url: string;
  name: string;
  /** Drops the database. */
  drop(): Promise<void>;
  /**
   * Terminates every connection to this database (what a failover or restart does to its clients);
   * resolves with how many there were. Touches no other database.
   */
  terminateBackends(): Promise<number>;
  /** Refuses (`false`) or accepts again (`true`) new connections to this database. */
  allowConnections(allow: boolean): Promise<void>;
}

async function onTestServer<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: testServerUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Creates an empty database with a unique name on the test server. */
export async function createTestDatabase(label: string): Promise<TestDatabase> {
  const name = `hallmark_${label.replace(/[^a-z0-9]/g, '_')}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: testServerUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  } finally {
    await admin.end();
  }
  const url = new URL(testServerUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      await onTestServer((client) => client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`));
    },
    terminateBackends: () =>
      onTestServer(async (client) => {
        const result = await client.query(
          'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
          [name],
        );
        return result.rowCount ?? 0;
      }),
    async allowConnections(allow) {
      await onTestServer((client) =>
        client.query(`ALTER DATABASE ${pg.escapeIdentifier(name)} ALLOW_CONNECTIONS ${allow ? 'true' : 'false'}`),
      );
    },
  };
}

export async function connectTestDatabase(label: string): Promise<{ db: SqlDatabase; drop(): Promise<void> }> {
  const test = await createTestDatabase(label);
  const db = createPostgresDatabase({ connectionString: test.url, applicationName: `test-${label}` });
  return {
    db,
    async drop() {
      await db.close();
      await test.drop();
    },
  };
}
