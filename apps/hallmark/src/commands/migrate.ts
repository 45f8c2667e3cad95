import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createPostgresDatabase, loadMigrations, runMigrations } from '@hallmark/sql';
import { UsageError } from './usage-error.ts';

/**
 * The distributed form's migrations, in the order the services need them (code-service's copy
 * GTIN claims into the accounts tables). Each folder is found beside its package's entry point, so
 * the same code works from src/ (tsx) and from dist/ (the compiled build).
 */
const modules: ReadonlyArray<[module: string, entry: string]> = [
  ['runtime', '@hallmark/runtime'],
  ['event-store', '@hallmark/event-store'],
  ['accounts', '@hallmark/accounts'],
  ['code-service', '@hallmark/code-service'],
  ['verify-service', '@hallmark/verify-service'],
  ['auction-service', '@hallmark/auction-service'],
  ['compliance-service', '@hallmark/compliance-service'],
];

const migrationsFolderOf = (entry: string) => fileURLToPath(new URL('../migrations', import.meta.resolve(entry)));

/** `--roles <file>`, or nothing. */
function rolesFileOf(args: string[]): string | undefined {
  if (args.length === 0) return undefined;
  const [option, file, ...rest] = args;
  if (option !== '--roles' || !file || file.startsWith('-') || rest.length > 0) {
    throw new UsageError('the migrate command takes only --roles <file> (infra/postgres/roles.sql)');
  }
  return file;
}

/**
 * Applies the pending migrations, then, with `--roles`, the services' roles and grants
 * (infra/postgres/roles.sql): a release whose migrations add a table is granted in the same step,
 * where before the operator had to run the file by hand and the services met 42501 until then.
 * Rejects with UsageError without HALLMARK_DATABASE_URL (the embedded form migrates itself at start).
 */
export async function migrateCommand(args: string[], env: NodeJS.ProcessEnv, out: (text: string) => void): Promise<void> {
  const rolesFile = rolesFileOf(args);
  // Read before anything is applied: a wrong path stops the command with nothing half done.
  const roles = rolesFile === undefined ? undefined : readRoles(rolesFile);
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
    if (roles !== undefined) {
      await db.execScript(roles);
      out(`roles: applied ${rolesFile}\n`);
    }
  } finally {
    await db.close();
  }
}

function readRoles(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read the roles file ${file}: ${(error as Error).message}`);
  }
}
