import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Hallmark } from '@hallmark/sdk';
import { type LockHolder, lockFileOf, readLockHolder, whyNotTrusted } from '../data-dir-lock.ts';
import { CommandError } from './command-error.ts';
import { UsageError } from './usage-error.ts';

/** A running product's API, through the SDK, with the key the command found. */
export interface ProductApi {
  /** Where the product is (`http://localhost:8080`, without /api/v1). */
  url: string;
  client: Hallmark;
  /** Builds another client on the same URL and key, with options of its own (a custom fetch). */
  clientWith(options: { fetch?: typeof fetch; timeout?: number }): Hallmark;
}

/** --url and --key as a command received them. */
export interface ProductOptions {
  url?: string | undefined;
  key?: string | undefined;
}

/**
 * Which environment variable a command reads its key from first: the operator's commands
 * (accounts, keys, gtins) HALLMARK_OPERATOR_KEY, the tenant's (codes, compliance) HALLMARK_API_KEY.
 */
export type KeyPreference = 'operator' | 'tenant';

export const embeddedDataDir = (env: NodeJS.ProcessEnv) => resolve(env.HALLMARK_DATA_DIR || './.hallmark');

/** `http://host:port`, from what a person may type (`localhost:8080/api/v1/`). Throws UsageError when it is no URL. */
export function productUrl(given: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(given) ? given : `http://${given}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new UsageError(`--url ${given} is not a URL (for example http://localhost:8080)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`--url must be http or https, not ${url.protocol}`);
  return `${url.origin}${url.pathname.replace(/\/+$/, '').replace(/\/api\/v1$/, '')}`;
}

function keyVariables(prefer: KeyPreference): readonly ['HALLMARK_OPERATOR_KEY' | 'HALLMARK_API_KEY', ...string[]] {
  return prefer === 'operator' ? ['HALLMARK_OPERATOR_KEY', 'HALLMARK_API_KEY'] : ['HALLMARK_API_KEY', 'HALLMARK_OPERATOR_KEY'];
}

/**
 * The key a command sends: --key, else the environment (keyVariables), else, for the embedded
 * server found through the data folder, `<data dir>/operator-key` (the file its first start wrote).
 * Rejects with CommandError saying where a key can come from when there is none.
 */
async function keyFor(
  options: ProductOptions,
  env: NodeJS.ProcessEnv,
  prefer: KeyPreference,
  embedded: { dataDir: string; holder: LockHolder } | undefined,
): Promise<string> {
  if (options.key) return options.key;
  const variables = keyVariables(prefer);
  for (const name of variables) {
    const value = env[name];
    if (value) return value;
  }
  if (embedded) {
    const fromFile = await readFile(join(embedded.dataDir, 'operator-key'), 'utf8').catch(() => undefined);
    if (fromFile?.trim()) return fromFile.trim();
    throw new CommandError(
      `a Hallmark server (pid ${embedded.holder.pid}, ${embedded.holder.url}) is running on ${embedded.dataDir}, so this ` +
        `command goes through its API, which needs a key: pass --key <key> or set ${variables.join(' or ')} ` +
        `(${join(embedded.dataDir, 'operator-key')} is gone).`,
    );
  }
  throw new CommandError(`the API needs a key: pass --key <key> or set ${variables.join(' or ')}`);
}

function apiOf(url: string, key: string): ProductApi {
  const clientWith = (options: { fetch?: typeof fetch; timeout?: number }) =>
    new Hallmark({ apiKey: key, baseUrl: url, ...options });
  return { url, client: clientWith({}), clientWith };
}

/**
 * The API of the embedded server that holds HALLMARK_DATA_DIR (its URL is in the lock file), with
 * the key found by keyFor. Rejects with CommandError while it is still starting, or without a key.
 */
export async function connectEmbeddedServer(
  dataDir: string,
  holder: LockHolder,
  options: ProductOptions,
  env: NodeJS.ProcessEnv,
  prefer: KeyPreference,
): Promise<ProductApi> {
  if (!holder.url) {
    throw new CommandError(`a Hallmark server (pid ${holder.pid}) is starting on ${dataDir}; try again in a moment`);
  }
  // The key goes only to a server of ours: the lock file names the address.
  const distrust = await whyNotTrusted(dataDir, holder);
  if (distrust) {
    throw new CommandError(
      `${lockFileOf(dataDir)} names a server this command does not trust (${distrust}); no key was sent. Remove the file if no Hallmark server of yours runs on ${dataDir}, or pass --url`,
    );
  }
  return apiOf(holder.url, await keyFor(options, env, prefer, { dataDir, holder }));
}

/**
 * For the commands that only talk to a running product (codes, compliance): --url, else the
 * embedded server running on HALLMARK_DATA_DIR. Rejects with CommandError when neither is there.
 */
export async function connectProduct(
  options: ProductOptions,
  env: NodeJS.ProcessEnv,
  prefer: KeyPreference,
): Promise<ProductApi> {
  if (options.url) return apiOf(productUrl(options.url), await keyFor(options, env, prefer, undefined));
  const dataDir = embeddedDataDir(env);
  const holder = await readLockHolder(dataDir);
  if (holder?.holder !== 'server') {
    throw new CommandError(
      `no Hallmark server is running on ${dataDir}: start one ("hallmark start"), or pass --url with the address of a running one`,
    );
  }
  return connectEmbeddedServer(dataDir, holder, options, env, prefer);
}
