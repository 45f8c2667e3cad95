import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CommandError } from './commands/command-error.ts';
import type { CommandIo } from './commands/command-io.ts';
import { UsageError } from './commands/usage-error.ts';
import {
  accountsUsage,
  auditUsage,
  codesUsage,
  complianceUsage,
  gtinsUsage,
  keysUsage,
  migrateUsage,
  productApiUsage,
  projectionsUsage,
  verifyUsage,
} from './commands/usages.ts';
import { DataDirInUseError } from './data-dir-lock.ts';

const exitCodes = `Exit codes:
  0   done (verify, audit: the code or export is valid)
  1   refused or failed: the API or the database said no (the message says why); codes generate: a row
      failed; verify, audit: not valid
  2   the command line is wrong (an unknown command or option, a missing or bad value, an unreadable file)
  70  an unexpected error (HALLMARK_DEBUG=1 prints its stack)
  78  a setting in the environment is wrong`;

const startUsage = `hallmark start
    Starts the whole product in this process (embedded form): API under /api/v1.`;

const usage = `Usage: hallmark <command> [options]      hallmark <command> --help      hallmark --version

  ${startUsage}
  ${accountsUsage}
  ${keysUsage}
  ${gtinsUsage}
  ${verifyUsage}
  ${codesUsage}
  ${complianceUsage}
  ${auditUsage}
  ${projectionsUsage}
  ${migrateUsage}

${productApiUsage}
accounts, keys and gtins grant/list/revoke go through the API as well with --url, or while "hallmark start"
runs on HALLMARK_DATA_DIR; else they work on the database itself (HALLMARK_DATABASE_URL, or the embedded
database under HALLMARK_DATA_DIR), which is how the first account is made. projections rebuild and gtins
conflicts work on the database only (the embedded product stopped); migrate on HALLMARK_DATABASE_URL.
Lists take --json for one JSON object per line. Progress bars are drawn on stderr, only when it is a terminal. More: docs/CLI.md.

${exitCodes}`;

/** Each command's own help, for `hallmark <command> --help`. */
const commandUsages: Record<string, string> = {
  start: startUsage,
  accounts: accountsUsage,
  keys: keysUsage,
  gtins: gtinsUsage,
  codes: codesUsage,
  compliance: complianceUsage,
  verify: verifyUsage,
  audit: auditUsage,
  projections: projectionsUsage,
  migrate: migrateUsage,
};

/** Commands that take an action first (`hallmark keys list`). */
const commandActions: Record<string, readonly string[]> = {
  accounts: ['create', 'list'],
  keys: ['create', 'list', 'revoke'],
  gtins: ['grant', 'list', 'revoke', 'conflicts'],
  codes: ['generate'],
  compliance: ['export'],
  projections: ['rebuild'],
};

const version = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

const write = (text: string) => process.stdout.write(text);
const io: CommandIo = { out: write, err: (text) => process.stderr.write(text), terminal: process.stderr };

async function start(): Promise<void> {
  const started = Date.now();
  // A first start (migrations, the console's build) can take a while on a busy machine: say so at once.
  write('Starting Hallmark (embedded form)…\n');
  buildConsoleIfStale();
  const { reportEventLoopOnSignal, stopOnSignal } = await import('@hallmark/runtime');
  reportEventLoopOnSignal();
  const { startEmbedded } = await import('./embedded.ts');
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

/**
 * In a checkout, the console is built again when its sources are newer than its build (a `git pull`
 * without an install); elsewhere (an installed package) there is nothing to build.
 */
function buildConsoleIfStale(): void {
  const script = fileURLToPath(new URL('../../console/scripts/build-console.mjs', import.meta.url));
  if (!existsSync(script)) return;
  const built = spawnSync(process.execPath, [script, '--if-stale'], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (built.status !== 0) write('console: the build failed; /console serves the previous build, if any\n');
}

/** Resolves with the exit code, or undefined when the command keeps running (start). */
async function main(argv: string[]): Promise<number | undefined> {
  const [command, ...rest] = argv;
  if (command === '--version' || command === '-V' || command === 'version') {
    write(`hallmark ${version}\n`);
    return 0;
  }
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    const about = rest[0] !== undefined ? commandUsages[rest[0]] : undefined;
    if (rest[0] !== undefined && !about) throw new UsageError(unknownCommand(rest[0]));
    write(`${about ? `Usage:\n  ${about}\n\n${exitCodes}` : usage}\n`);
    return 0;
  }
  const own = commandUsages[command];
  // -h or --help anywhere before a "--" asks for the command's help, whatever else is there.
  const options = rest.indexOf('--') >= 0 ? rest.slice(0, rest.indexOf('--')) : rest;
  if (own && options.some((arg) => arg === '--help' || arg === '-h')) {
    write(`Usage:\n  ${own}\n\n${exitCodes}\n`);
    return 0;
  }
  const actions = commandActions[command];
  if (actions && (rest[0] === undefined || rest[0].startsWith('-'))) {
    throw new UsageError(`${command} needs an action: ${actions.join(', ')}`);
  }
  switch (command) {
    case 'start':
      if (rest.length > 0) throw new UsageError(`start takes no arguments (settings come from the environment: see the README)`);
      await start();
      return undefined;
    case 'accounts':
      await (await import('./commands/accounts.ts')).accountsCommand(rest, process.env, write);
      return 0;
    case 'keys':
      await (await import('./commands/keys.ts')).keysCommand(rest, process.env, write);
      return 0;
    case 'gtins':
      await (await import('./commands/gtins.ts')).gtinsCommand(rest, process.env, write);
      return 0;
    case 'codes':
      return (await import('./commands/codes.ts')).codesCommand(rest, process.env, io);
    case 'compliance':
      return (await import('./commands/compliance.ts')).complianceCommand(rest, process.env, io);
    case 'verify':
      return (await import('./commands/verify.ts')).verifyCommand(rest, process.env, write);
    case 'audit':
      return (await import('./commands/audit.ts')).auditCommand(rest, write);
    case 'projections':
      await (await import('./commands/projections.ts')).projectionsCommand(rest, process.env, io);
      return 0;
    case 'migrate':
      await (await import('./commands/migrate.ts')).migrateCommand(rest, process.env, write);
      return 0;
    default:
      throw new UsageError(unknownCommand(command));
  }
}

/** `unknown command "kyes" (did you mean "keys"?)`: the closest command when one is near. */
function unknownCommand(command: string): string {
  if (command.startsWith('-')) return `unknown option ${command} (options come after the command)`;
  const near = nearest(Object.keys(commandUsages), command);
  return `unknown command "${command}"${near ? ` (did you mean "${near}"?)` : ''}`;
}

/** `(did you mean --json?)` for an unknown option: the nearest of the options the command's usage names. */
function nearOption(command: string | undefined, option: string): string {
  const usage = command ? commandUsages[command] : undefined;
  if (!usage) return '';
  const known = [...new Set(usage.match(/--[a-z][a-z-]*/g) ?? [])];
  const near = nearest(known, option);
  return near ? ` (did you mean ${near}?)` : '';
}

/** The candidate closest to `given`, if one is within two edits. */
function nearest(candidates: readonly string[], given: string): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    const distance = editDistance(name, given);
    if (distance <= 2 && (!best || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        (previous[j] ?? 0) + 1,
        (current[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** node:util parseArgs' refusals, said in one line ("unknown option --colour"). */
function parseArgsProblem(error: unknown, command: string | undefined): string | undefined {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string' || !code.startsWith('ERR_PARSE_ARGS')) return undefined;
  const message = (error as Error).message;
  const named = /'(-{1,2}[^' ]+)/.exec(message)?.[1];
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return named ? `unknown option ${named}${nearOption(command, named)}` : message;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return named ? `${named} ${message.includes('argument missing') ? 'needs a value' : 'takes no value'}` : message;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument ${/'([^']*)'/.exec(message)?.[1] ?? ''}`.trim();
    default:
      return message.split('. ')[0];
  }
}

/** The hint after a usage error: the help of the command that was given, else the general one. */
function helpHint(argv: readonly string[]): string {
  const command = argv[0];
  return command && commandUsages[command]
    ? `Run "hallmark ${command} --help" for its usage.`
    : 'Run "hallmark --help" for usage.';
}

// A reader that stops early (`hallmark accounts list | head -1`) closes the pipe: that is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

const argv = process.argv.slice(2);
try {
  const code = await main(argv);
  if (code !== undefined) {
    // process.exit drops what a pipe has not taken yet (a 1 MB report reached `| wc -c` as 64 KiB):
    // the empty write's callback runs once everything written before it is out.
    await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
    process.exit(code);
  }
} catch (error) {
  // A wrong command line: one line saying what, and where the usage is; not the whole usage.
  const usageProblem = error instanceof UsageError ? error.message : parseArgsProblem(error, argv[0]);
  if (usageProblem !== undefined) {
    process.stderr.write(`hallmark: ${usageProblem}\n${helpHint(argv)}\n`);
    process.exit(2); // a wrong command line, as shells and most tools answer it
  }
  // Loaded only now: help and version answer without the product's code.
  const { HallmarkError } = await import('@hallmark/contracts');
  const { exitOnConfigError } = await import('@hallmark/runtime');
  const { sdkErrorLine } = await import('./commands/sdk-error-line.ts');
  const apiProblem = sdkErrorLine(error);
  if (apiProblem !== undefined) {
    process.stderr.write(`hallmark: ${apiProblem}\n`);
    process.exit(1);
  }
  if (error instanceof HallmarkError || error instanceof CommandError || error instanceof DataDirInUseError) {
    process.stderr.write(`hallmark: ${error.message}\n`);
    process.exit(1);
  }
  try {
    exitOnConfigError(error, 'hallmark');
  } catch {
    // Anything else is a fault of ours or of the machine: one line, the stack only when asked for.
    process.stderr.write(
      process.env.HALLMARK_DEBUG
        ? `hallmark: ${(error as Error)?.stack ?? String(error)}\n`
        : `hallmark: ${(error as Error)?.message ?? String(error)} (HALLMARK_DEBUG=1 shows where)\n`,
    );
    process.exit(70); // EX_SOFTWARE
  }
}
