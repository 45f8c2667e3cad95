import { createPostgresDatabase } from '@hallmark/sql';

/**
 * One statement on the database at `url` over a connection of its own, closed after it: for a test
 * that reads or rigs a distributed product's PostgreSQL while its processes run (a pool held open
 * would keep a connection the product's stop then waits for).
 */
export async function sqlOnce<T>(url: string, text: string, params: unknown[] = []): Promise<T[]> {
  const db = createPostgresDatabase({ connectionString: url, maxConnections: 1 });
  try {
    return (await db.query(text, params)) as T[];
  } finally {
    await db.close();
  }
}
