import { createPostgresDatabase } from '@hallmark/sql';
import type { RunningProduct } from './distributed-product.ts';
import type { EmbeddedRunningProduct } from './embedded.ts';

/**
 * Runs `work` against the product's own database, in either form: the embedded process's PGlite, or
 * the distributed form's PostgreSQL over a connection of its own (closed afterwards). For tests that
 * make what a fault leaves behind (a lost answer, a removed record).
 */
export async function withProductDatabase<T>(
  product: RunningProduct,
  work: (query: (text: string, params?: unknown[]) => Promise<unknown[]>) => Promise<T>,
): Promise<T> {
  if (product.form === 'embedded') {
    const db = (product as EmbeddedRunningProduct).test.product.db;
    return work((text, params) => db.query(text, params));
  }
  const db = createPostgresDatabase({ connectionString: product.databaseUrl as string, maxConnections: 1 });
  try {
    return await work((text, params) => db.query(text, params));
  } finally {
    await db.close();
  }
}
