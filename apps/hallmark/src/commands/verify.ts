import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { type JsonWebKeySet, verifyOffline } from '@hallmark/client';
import { connectProduct } from './product-api.ts';
import { UsageError } from './usage-error.ts';

/**
 * `hallmark verify <link>`: through the running product's POST /code/verify (the SDK), which counts
 * the scan; with --offline, against a saved key set with no server. Resolves with the exit code:
 * 0 for a valid code (online: the verdict AUTHENTIC), 1 otherwise.
 */
export async function verifyCommand(args: string[], env: NodeJS.ProcessEnv, out: (text: string) => void): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      offline: { type: 'boolean' },
      jwks: { type: 'string' },
      env: { type: 'string' },
      url: { type: 'string' },
      key: { type: 'string' },
    },
  });
  const [link] = positionals;
  if (!link || positionals.length > 1) throw new UsageError('give exactly one link to verify');
  if (!values.offline) {
    if (values.jwks || values.env) throw new UsageError('--jwks and --env go with --offline');
    const api = await connectProduct(values, env, 'tenant');
    const result = await api.client.codes.verify({ url: link });
    out(`${JSON.stringify(result, null, 2)}\n`);
    return 'verdict' in result && result.verdict === 'AUTHENTIC' ? 0 : 1;
  }
  if (values.url || values.key) throw new UsageError('--url and --key are for online verification (without --offline)');
  if (!values.jwks) throw new UsageError('--jwks <file> is required');
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
