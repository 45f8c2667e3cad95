import { fileURLToPath } from 'node:url';
import { isPermissionDenied, loadMigrations, runMigrations, type SqlDatabase } from '@hallmark/sql';

const folder = fileURLToPath(new URL('../migrations', import.meta.url));

/**
 * The id of the installation this database belongs to (the `installation` table's one row, made
 * by this package's migration, which this applies when it has not been). Every service of an
 * installation shares the database, so they all read the same id.
 */
export async function installationOf(db: SqlDatabase): Promise<string> {
  await runMigrations(db, await loadMigrations('runtime', folder));
  return readInstallation(db);
}

/** The installation id as the database holds it now (installationOf, without the migration). */
export async function readInstallation(db: SqlDatabase): Promise<string> {
  const rows = await db
    .query<{ id: string }>('SELECT id::text AS id FROM installation ORDER BY created_at LIMIT 1')
    .catch((error: unknown) => {
      if (!isPermissionDenied(error)) throw error;
      throw new Error(
        "This service's database role may not read the installation table: apply infra/postgres/roles.sql " +
          "again with the tables' owner (hallmark migrate --roles infra/postgres/roles.sql), as after any release that adds a table.",
        { cause: error },
      );
    });
  const [row] = rows;
  if (!row) throw new Error('the installation table has no row: its migration (runtime 1) was undone by hand');
  return row.id;
}
