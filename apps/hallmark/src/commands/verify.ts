import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { type JsonWebKeySet, verifyOffline } from '@hallmark/client';
import { UsageError } from './usage-error.ts';

/** Resolves with the exit code. */
export async function verifyCommand(args: string[], out: (text: string) => void): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { offline: { type: 'boolean' }, jwks: { type: 'string' }, env: { type: 'string' } },
  });
  if (!values.offline)
    throw new UsageError('only --offline verification is built into the CLI; online, use POST /api/v1/code/verify');
  if (!values.jwks) throw new UsageError('--jwks <file> is required');
  const [link] = positionals;
  if (!link || positionals.length > 1) throw new UsageError('give exactly one link to verify');
  let jwks: JsonWebKeySet;
  try {
    jwks = JSON.parse(await readFile(values.jwks, 'utf8')) as JsonWebKeySet;
  } catch (error) {
    throw new UsageError(`cannot read a key set from ${values.jwks}: ${(error as Error).message}`);
  }
  if (!Array.isArray(jwks.keys)) throw new UsageError(`${values.jwks} is not a JWKS (no "keys" array)`);
  const environment = values.env ?? 'live';
  if (environment !== 'live' && environment !== 'test') throw new UsageError('--env must be live or test');
  const result = verifyOffline(link, jwks, { environment });
  out(`${JSON.stringify(result, null, 2)}\n`);
  return result.valid ? 0 : 1;
}
