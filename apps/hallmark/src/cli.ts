import { parseArgs } from 'node:util';
import { exitOnConfigError, stopOnSignal } from '@hallmark/runtime';
import { startEmbedded } from './embedded.ts';

const usage = `Usage: hallmark <command>

Commands:
  start     Start the whole product in this process (embedded form): API under /api/v1.

Environment: see the README's table (PORT, HALLMARK_DATA_DIR, HALLMARK_LOG_LEVEL, …).`;

async function main(argv: string[]): Promise<number> {
  const { positionals } = parseArgs({ args: argv, allowPositionals: true, strict: false });
  const [command] = positionals;
  switch (command) {
    case 'start': {
      const started = Date.now();
      const product = await startEmbedded();
      process.stdout.write(
        `Hallmark is running at ${product.url} (API: ${product.url}/api/v1, started in ${Date.now() - started} ms)\n`,
      );
      if (product.generatedOperatorKey) {
        process.stdout.write(
          `\nOperator API key (shown this once; only its hash is stored):\n  ${product.generatedOperatorKey}\n` +
            'It holds every scope, accounts:write included. Try:\n' +
            `  curl -H 'x-api-key: ${product.generatedOperatorKey}' ${product.url}/api/v1/keys\n\n`,
        );
      }
      stopOnSignal(product.stop, product.log, 10_000);
      return -1;
    }
    case undefined:
    case 'help':
    case '--help':
      process.stdout.write(`${usage}\n`);
      return 0;
    default:
      process.stderr.write(`hallmark: unknown command "${command}"\n\n${usage}\n`);
      return 64; // EX_USAGE
  }
}

try {
  const code = await main(process.argv.slice(2));
  if (code >= 0) process.exit(code);
} catch (error) {
  exitOnConfigError(error, 'hallmark');
}
