import { fileURLToPath } from 'node:url';
import { loadMigrations, runMigrations, type SqlDatabase } from '@hallmark/sql';

const folder = fileURLToPath(new URL('../migrations', import.meta.url));

/** Creates or updates the accounts and keys tables. Safe to call from every replica at start. */
export async function migrateAccounts(db: SqlDatabase): Promise<void> {
  await runMigrations(db, await loadMigrations('accounts', folder));
}
