import { mkdir } from 'node:fs/promises';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import type { SqlDatabase, SqlExecutor } from './sql-database.ts';

/**
 * SqlDatabase over PGlite: PostgreSQL compiled to WebAssembly, in this process.
 * `dataDir` keeps the data on disk; without it the database lives in memory.
 * PGlite has one connection, so its transactions run one at a time.
 */
export async function createPgliteDatabase(dataDir?: string): Promise<SqlDatabase> {
  if (dataDir) await mkdir(dataDir, { recursive: true });
  const db = dataDir ? await PGlite.create(dataDir) : await PGlite.create();

  const executorOf = (client: PGlite | Transaction): SqlExecutor => ({
    async query<Row>(text: string, params?: readonly unknown[]) {
      const result = await client.query<Row>(text, params as unknown[] | undefined);
      return result.rows;
    },
    async execScript(sql: string) {
      await client.exec(sql);
    },
  });

  return {
    engine: 'pglite',
    ...executorOf(db),
    transaction: (work) => db.transaction((tx) => work(executorOf(tx))),
    async listen(channel, onNotify) {
      const unlisten = await db.listen(channel, onNotify);
      return () => unlisten();
    },
    async ping() {
      await db.query('SELECT 1');
    },
    close: () => db.close(),
  };
}
