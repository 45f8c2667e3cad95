import { fileURLToPath } from 'node:url';
import { migrateAccounts } from '@hallmark/accounts';
import { loadMigrations, type MigrationSet, runMigrations, type SqlDatabase } from '@hallmark/sql';

const folder = fileURLToPath(new URL('../migrations', import.meta.url));

/** verify-service's own migrations (its `migrations/` folder), for a test that applies some of them. */
export function loadVerifyServiceMigrations(): Promise<MigrationSet> {
  return loadMigrations('verify-service', folder);
}

/**
 * verify-service's tables, after the accounts tables: it reads the keys and claims, and its
 * triggers move the accounts' cache epochs (migration 0010 calls `bump_named_cache_epoch`). It may
 * start before the services that own the accounts tables.
 */
export async function migrateVerifyService(db: SqlDatabase): Promise<void> {
  await migrateAccounts(db);
  await runMigrations(db, await loadVerifyServiceMigrations());
}
