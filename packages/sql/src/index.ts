export { cursorMicroseconds, cursorMicrosecondsPattern, cursorTime } from './cursor-time.ts';
export { isPermissionDenied, loadMigrations, type Migration, type MigrationSet, runMigrations } from './migrations.ts';
export { createPgliteDatabase } from './pglite-database.ts';
export {
  createPostgresDatabase,
  isConnectionError,
  isPoolWaitTimeout,
  isStatementTimeout,
  type PostgresOptions,
} from './postgres-database.ts';
export { queryAfterLock } from './query-after-lock.ts';
export type { OneTripOutcome, OneTripStatement, SqlDatabase, SqlExecutor } from './sql-database.ts';
export { connectTestDatabase, createTestDatabase, type TestDatabase, testServerUrl } from './test-database.ts';
