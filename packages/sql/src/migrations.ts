import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SqlDatabase } from './sql-database.ts';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The migrations of one module (a package or a service); versions count up from 1 within it. */
export interface MigrationSet {
  module: string;
  migrations: readonly Migration[];
}

const fileNamePattern = /^(\d{4})_([a-z0-9_]+)\.sql$/;

/** Reads `NNNN_name.sql` files from a folder, in version order. Fails on a misnamed file. */
export async function loadMigrations(module: string, folder: string): Promise<MigrationSet> {
  const files = (await readdir(folder)).filter((file) => file.endsWith('.sql')).sort();
  const migrations: Migration[] = [];
  for (const file of files) {
    const match = fileNamePattern.exec(file);
    if (!match?.[1] || !match[2]) {
      throw new Error(`Migration file ${join(folder, file)} must be named NNNN_name.sql (lower case).`);
    }
    migrations.push({ version: Number(match[1]), name: match[2], sql: await readFile(join(folder, file), 'utf8') });
  }
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new Error(`Migrations of ${module} must be numbered 1, 2, 3… without gaps; found ${migration.version}.`);
    }
  });
  return { module, migrations };
}

/** PostgreSQL refused a statement for the role's privileges (SQLSTATE 42501), on the error or its cause. */
export function isPermissionDenied(error: unknown): boolean {
  const { code, cause } = (error ?? {}) as { code?: unknown; cause?: { code?: unknown } };
  return (code ?? cause?.code) === '42501';
}

/**
 * Applies the migrations not yet applied, each set in one transaction under an advisory lock,
 * so replicas starting at once apply each migration exactly once and the others wait, then skip.
 * Resolves with the versions it applied.
 */
export async function runMigrations(db: SqlDatabase, set: MigrationSet): Promise<number[]> {
  return db.transaction(async (tx) => {
    // As a script: it waits, without the statement timeout, for another replica's migrations to end.
    await tx.execScript(`SELECT pg_advisory_xact_lock(hashtextextended('hallmark:migrations', 0))`);
    // Created only when missing: a service's own role (infra/postgres/roles.sql) may not create
    // anything in the schema, and PostgreSQL refuses it CREATE TABLE IF NOT EXISTS even for a table that exists.
    const [table] = await tx.query<{ name: string | null }>(`SELECT to_regclass('schema_migrations')::text AS name`);
    if (!table?.name) {
      await tx.execScript(`
        CREATE TABLE schema_migrations (
          module text NOT NULL,
          version integer NOT NULL,
          name text NOT NULL,
          applied_at timestamptz NOT NULL DEFAULT now(),
          PRIMARY KEY (module, version)
        )`);
    }
    const rows = await tx.query<{ version: number }>('SELECT version FROM schema_migrations WHERE module = $1', [set.module]);
    const applied = new Set(rows.map((row) => Number(row.version)));
    const newlyApplied: number[] = [];
    for (const migration of set.migrations) {
      if (applied.has(migration.version)) continue;
      try {
        await tx.execScript(migration.sql);
      } catch (error) {
        if (!isPermissionDenied(error)) throw error;
        throw new Error(
          `Migration ${set.module} ${migration.version} (${migration.name}) was refused: permission denied. ` +
            "A service role cannot change the schema: apply migrations with the tables' owner (its URL as " +
            'HALLMARK_DATABASE_URL, once), then run infra/postgres/roles.sql again.',
          { cause: error },
        );
      }
      await tx.query('INSERT INTO schema_migrations (module, version, name) VALUES ($1, $2, $3)', [
        set.module,
        migration.version,
        migration.name,
      ]);
      newlyApplied.push(migration.version);
    }
    return newlyApplied;
  });
}
