import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LockHolder } from '../data-dir-lock.ts';
import { CommandError } from './command-error.ts';

/** The running embedded server's API, called with an operator (or account) key. */
export interface OperatorApi {
  url: string;
  /** One JSON request under /api/v1; rejects with CommandError carrying the server's message on an error answer. */
  request<T = Record<string, unknown>>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T>;
}

/**
 * The key the CLI sends: --key, else HALLMARK_OPERATOR_KEY, else `<data dir>/operator-key` (the
 * file the first start wrote). Rejects with CommandError saying how to proceed when there is none.
 */
async function keyFor(
  dataDir: string,
  holder: LockHolder,
  keyOption: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  if (keyOption) return keyOption;
  if (env.HALLMARK_OPERATOR_KEY) return env.HALLMARK_OPERATOR_KEY;
  const fromFile = await readFile(join(dataDir, 'operator-key'), 'utf8').catch(() => undefined);
  if (fromFile?.trim()) return fromFile.trim();
  throw new CommandError(
    `a Hallmark server (pid ${holder.pid}, ${holder.url}) is running on ${dataDir}, so this command goes through its API, ` +
      `which needs the operator key: pass --key <key> or set HALLMARK_OPERATOR_KEY (${join(dataDir, 'operator-key')} is gone). ` +
      'Or stop the server and run the command again to work on the database directly.',
  );
}

/** The API of the server holding `dataDir`. Rejects with CommandError when it has no URL yet or no key is found. */
export async function connectOperatorApi(
  dataDir: string,
  holder: LockHolder,
  keyOption: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<OperatorApi> {
  if (!holder.url) {
    throw new CommandError(`a Hallmark server (pid ${holder.pid}) is starting on ${dataDir}; try again in a moment`);
  }
  const url = holder.url;
  const key = await keyFor(dataDir, holder, keyOption, env);
  return {
    url,
    async request<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
      let response: Response;
      try {
        response = await fetch(`${url}/api/v1${path}`, {
          method,
          headers: { 'x-api-key': key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        });
      } catch (error) {
        throw new CommandError(`the Hallmark server at ${url} (pid ${holder.pid}) does not answer: ${(error as Error).message}`);
      }
      const text = await response.text();
      const parsed = text
        ? (JSON.parse(text) as T & { error?: { code: string; message: string } })
        : ({} as T & { error?: never });
      if (!response.ok) {
        const error = parsed.error;
        throw new CommandError(
          `the server at ${url} answered ${response.status}${error ? ` ${error.code}: ${error.message}` : ''}`,
        );
      }
      return parsed;
    },
  };
}
