export type { SqlDatabase, SqlExecutor } from './sql-database.ts';
export { createPostgresDatabase, type PostgresOptions } from './postgres-database.ts';
export { createPgliteDatabase } from './pglite-database.ts';
export { loadMigrations, runMigrations, type Migration, type MigrationSet } from './migrations.ts';
export { connectTestDatabase, createTestDatabase, testServerUrl, type TestDatabase } from './test-database.ts';
