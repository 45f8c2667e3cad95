import { HallmarkError } from '@hallmark/contracts';
import { exitOnConfigError, reportEventLoopOnSignal, stopOnSignal } from '@hallmark/runtime';
import { accountsCommand, accountsUsage } from './commands/accounts.ts';
import { auditCommand, auditUsage } from './commands/audit.ts';
import { CommandError } from './commands/command-error.ts';
import { gtinsCommand, gtinsUsage } from './commands/gtins.ts';
import { keysCommand, keysUsage } from './commands/keys.ts';
import { migrateCommand, migrateUsage } from './commands/migrate.ts';
import { projectionsCommand, projectionsUsage } from './commands/projections.ts';
import { UsageError } from './commands/usage-error.ts';
import { verifyCommand, verifyUsage } from './commands/verify.ts';
import { DataDirInUseError } from './data-dir-lock.ts';
import { startEmbedded } from './embedded.ts';

const usage = `Usage: hallmark <command>

  hallmark start
    Starts the whole product in this process (embedded form): API under /api/v1.
  ${accountsUsage}
  ${keysUsage}
  ${gtinsUsage}
  ${verifyUsage}
  ${auditUsage}
  ${projectionsUsage}
  ${migrateUsage}

The account, key and projection commands work on HALLMARK_DATABASE_URL, or else on the embedded database
under HALLMARK_DATA_DIR. While "hallmark start" runs there, accounts, keys and gtins grant/list/revoke go
through its API (with --key, HALLMARK_OPERATOR_KEY or <data dir>/operator-key); projections rebuild and
gtins conflicts need it stopped. See the README for every setting.`;

const write = (text: string) => process.stdout.write(text);

async function start(): Promise<void> {
  const started = Date.now();
  reportEventLoopOnSignal();
  const product = await startEmbedded();
  write(`Hallmark is running at ${product.url} (API: ${product.url}/api/v1, started in ${Date.now() - started} ms)\n`);
  if (product.operatorKeyFile) {
    // The secret goes to a file only the owner can read, not to a terminal or a log collector.
    write(
      `\nA new operator API key is in ${product.operatorKeyFile} (mode 0600; the database keeps only its hash).\n` +
        'It holds every scope, accounts:write included; once it is stored somewhere safe, delete the file. Try:\n' +
        `  KEY=$(cat ${product.operatorKeyFile})\n` +
        `  curl -H "x-api-key: $KEY" ${product.url}/api/v1/keys\n\n`,
    );
  }
  stopOnSignal(product.stop, product.log, 10_000);
}

/** Resolves with the exit code, or undefined when the command keeps running (start). */
async function main(argv: string[]): Promise<number | undefined> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'start':
      await start();
      return undefined;
    case 'accounts':
      await accountsCommand(rest, process.env, write);
      return 0;
    case 'keys':
      await keysCommand(rest, process.env, write);
      return 0;
    case 'gtins':
      await gtinsCommand(rest, process.env, write);
      return 0;
    case 'verify':
      return verifyCommand(rest, write);
    case 'audit':
      return auditCommand(rest, write);
    case 'projections':
      await projectionsCommand(rest, process.env, write);
      return 0;
    case 'migrate':
      await migrateCommand(rest, process.env, write);
      return 0;
    case undefined:
    case 'help':
    case '--help':
      write(`${usage}\n`);
      return 0;
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

try {
  const code = await main(process.argv.slice(2));
  if (code !== undefined) process.exit(code);
} catch (error) {
  if (error instanceof UsageError) {
    process.stderr.write(`hallmark: ${error.message}\n\n${usage}\n`);
    process.exit(64); // EX_USAGE
  }
  if (error instanceof HallmarkError || error instanceof CommandError || error instanceof DataDirInUseError) {
    process.stderr.write(`hallmark: ${error.message}\n`);
    process.exit(1);
  }
  exitOnConfigError(error, 'hallmark');
}
