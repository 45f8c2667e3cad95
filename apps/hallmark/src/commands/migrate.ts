import { fileURLToPath } from 'node:url';
import { createPostgresDatabase, loadMigrations, runMigrations } from '@hallmark/sql';
import { UsageError } from './usage-error.ts';

/**
 * The distributed form's migrations, in the order the services need them (code-service's copy
 * GTIN claims into the accounts tables). Each folder is found beside its package's entry point, so
 * the same code works from src/ (tsx) and from dist/ (the compiled build).
 */
const modules: ReadonlyArray<[module: string, entry: string]> = [
  ['event-store', '@hallmark/event-store'],
  ['accounts', '@hallmark/accounts'],
  ['code-service', '@hallmark/code-service'],
  ['verify-service', '@hallmark/verify-service'],
  ['auction-service', '@hallmark/auction-service'],
  ['compliance-service', '@hallmark/compliance-service'],
];

const migrationsFolderOf = (entry: string) => fileURLToPath(new URL('../migrations', import.meta.resolve(entry)));

/** Rejects with UsageError without HALLMARK_DATABASE_URL (the embedded form migrates itself at start). */
export async function migrateCommand(args: string[], env: NodeJS.ProcessEnv, out: (text: string) => void): Promise<void> {
  if (args.length > 0) throw new UsageError('the migrate command takes no arguments');
  const url = env.HALLMARK_DATABASE_URL;
  if (!url) throw new UsageError('hallmark migrate needs HALLMARK_DATABASE_URL (the embedded form migrates itself at start)');
  const db = createPostgresDatabase({
    connectionString: url,
    ...(env.HALLMARK_TLS_CA_FILE ? { tlsCaFile: env.HALLMARK_TLS_CA_FILE } : {}),
    applicationName: 'hallmark-migrate',
    maxConnections: 1,
  });
  try {
    for (const [module, entry] of modules) {
      const applied = await runMigrations(db, await loadMigrations(module, migrationsFolderOf(entry)));
      out(`${module}: ${applied.length === 0 ? 'up to date' : `applied ${applied.join(', ')}`}\n`);
    }
  } finally {
    await db.close();
  }
}
