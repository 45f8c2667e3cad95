import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations, type MigrationSet, runMigrations } from './migrations.ts';
import { createPgliteDatabase } from './pglite-database.ts';
import { createPostgresDatabase } from './postgres-database.ts';
import { createTestDatabase, type TestDatabase } from './test-database.ts';

const set: MigrationSet = {
  module: 'widgets',
  migrations: [
    { version: 1, name: 'widgets', sql: 'CREATE TABLE widgets (id int PRIMARY KEY); CREATE INDEX widgets_id ON widgets (id);' },
    { version: 2, name: 'widget_names', sql: 'ALTER TABLE widgets ADD COLUMN name text' },
  ],
};

describe('migrations on PostgreSQL', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase('migrations');
  });
  afterAll(async () => {
    await database.drop();
  });

  it('applies each migration once when four replicas start at the same moment, and nothing on a rerun', async () => {
    const replicas = Array.from({ length: 4 }, () =>
      createPostgresDatabase({ connectionString: database.url, maxConnections: 2 }),
    );
    const applied = await Promise.all(replicas.map((db) => runMigrations(db, set)));
    expect(applied.flat().sort()).toEqual([1, 2]);
    expect(await runMigrations(replicas[0]!, set)).toEqual([]);
    const columns = await replicas[0]!.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns WHERE table_name = 'widgets' ORDER BY column_name`,
    );
    expect(columns.map((column) => column.column_name)).toEqual(['id', 'name']);
    await Promise.all(replicas.map((db) => db.close()));
  });

  it('rolls a failing migration back whole, leaving earlier ones applied', async () => {
    const db = createPostgresDatabase({ connectionString: database.url });
    const broken: MigrationSet = {
      module: 'broken',
      migrations: [{ version: 1, name: 'half', sql: 'CREATE TABLE half_done (id int); SELECT * FROM no_such_table;' }],
    };
    await expect(runMigrations(db, broken)).rejects.toThrow(/no_such_table/);
    expect(await db.query(`SELECT to_regclass('half_done') AS t`)).toEqual([{ t: null }]);
    await db.close();
  });
});

describe('migrations on PGlite', () => {
  it('applies the same SQL, once', async () => {
    const db = await createPgliteDatabase();
    expect(await runMigrations(db, set)).toEqual([1, 2]);
    expect(await runMigrations(db, set)).toEqual([]);
    await db.close();
  });
});

describe('loadMigrations', () => {
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'migrations-'));
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it('reads NNNN_name.sql files in order and refuses a gap', async () => {
    await writeFile(join(folder, '0001_first.sql'), 'SELECT 1');
    await writeFile(join(folder, '0002_second.sql'), 'SELECT 2');
    expect((await loadMigrations('m', folder)).migrations.map((migration) => migration.name)).toEqual(['first', 'second']);
    await writeFile(join(folder, '0004_fourth.sql'), 'SELECT 4');
    await expect(loadMigrations('m', folder)).rejects.toThrow(/without gaps/);
  });

  it('refuses a misnamed file', async () => {
    const other = await mkdtemp(join(tmpdir(), 'migrations-'));
    await writeFile(join(other, '1_First.sql'), 'SELECT 1');
    await expect(loadMigrations('m', other)).rejects.toThrow(/NNNN_name\.sql/);
    await rm(other, { recursive: true, force: true });
  });
});
