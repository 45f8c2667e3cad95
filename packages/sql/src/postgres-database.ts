import pg from 'pg';
import type { SqlDatabase, SqlExecutor } from './sql-database.ts';

export interface PostgresOptions {
  connectionString: string;
  /** Pool size; the default suits one service replica. */
  maxConnections?: number;
  applicationName?: string;
}

/** SqlDatabase over a PostgreSQL server through a `pg` pool. */
export function createPostgresDatabase(options: PostgresOptions): SqlDatabase {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.maxConnections ?? 10,
    application_name: options.applicationName ?? 'hallmark',
    connectionTimeoutMillis: 5_000,
  });
  // An idle client that loses its connection emits here; without a listener it would crash the process.
  pool.on('error', () => {});
  const listeners = new Set<pg.Client>();

  const executorOf = (client: pg.Pool | pg.PoolClient): SqlExecutor => ({
    async query<Row>(text: string, params?: readonly unknown[]) {
      const result = await client.query(text, params as unknown[] | undefined);
      return result.rows as Row[];
    },
    async execScript(sql: string) {
      await client.query(sql);
    },
  });

  return {
    engine: 'postgres',
    ...executorOf(pool),
    async transaction(work) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await work(executorOf(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    async listen(channel, onNotify) {
      // LISTEN needs a connection of its own: a pooled one would be handed to other queries.
      const client = new pg.Client({ connectionString: options.connectionString });
      client.on('error', () => {});
      await client.connect();
      client.on('notification', (message) => {
        if (message.channel === channel) onNotify(message.payload ?? '');
      });
      await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      listeners.add(client);
      return async () => {
        listeners.delete(client);
        await client.end().catch(() => {});
      };
    },
    async ping() {
      await pool.query('SELECT 1');
    },
    async close() {
      await Promise.all([...listeners].map((client) => client.end().catch(() => {})));
      listeners.clear();
      await pool.end();
    },
  };
}
