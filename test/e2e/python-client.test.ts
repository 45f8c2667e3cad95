// Issue #22, items 3-4: the Python client (clients/python) against the running product, in both forms.
// Its pytest suite (clients/python/tests) proves the behaviours over real HTTP: retries through a proxy
// that fails on purpose (one code for a POST that met 503 twice), Retry-After, paging a thousand keys,
// every error code's class, offline verification and export audits that agree with the server, and a
// delivered webhook's signatures. Then mypy --strict over the package, where Debian's mypy is installed.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { startEmbeddedProduct } from '../support/embedded.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const python = '/usr/bin/python3';
// Webhooks are delivered to the suite's receiver on 127.0.0.1.
const productEnv = { HALLMARK_WEBHOOKS_ALLOW_PRIVATE: 'true', HALLMARK_WEBHOOK_POLL_MS: '50' };

/** Runs a command without blocking the event loop (the embedded product serves from this process). */
function run(
  command: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** pytest's exit status, with its output printed when it failed. */
async function pytest(product: RunningProduct): Promise<number | null> {
  const { code, output } = await run(python, ['-m', 'pytest', 'clients/python/tests', '-q', '-p', 'no:cacheprovider'], {
    HALLMARK_TEST_BASE_URL: product.url,
    HALLMARK_TEST_OPERATOR_KEY: product.operatorKey,
    PYTHONDONTWRITEBYTECODE: '1',
  });
  if (code !== 0) console.error(`pytest (${product.form} form) failed:\n${output}`);
  return code;
}

it('Debian Python has pytest and cryptography (CI installs python3-pytest and python3-cryptography)', async () => {
  expect(existsSync(python), `${python} is missing`).toBe(true);
  const { code, output } = await run(python, ['-c', 'import pytest, cryptography']);
  expect(code, output).toBe(0);
});

describe.each([
  ['embedded', () => startEmbeddedProduct({ ...productEnv, HALLMARK_LOG_LEVEL: 'warn' })],
  ['distributed', () => startDistributedProduct(productEnv)],
])('the Python client against the %s form', (_form, start) => {
  let product: RunningProduct;

  beforeAll(async () => {
    product = await start();
  }, 120_000);

  afterAll(async () => {
    await product?.stop();
  });

  it('passes its pytest suite', async () => {
    expect(await pytest(product)).toBe(0);
  }, 300_000);
});

it('passes mypy --strict (where Debian mypy is installed)', async () => {
  const probe = await run(python, ['-c', 'import mypy']);
  if (probe.code !== 0) {
    console.warn('mypy is not installed (apt-get install mypy): the type check did not run');
    return;
  }
  const { code, output } = await run(python, ['-m', 'mypy', '--strict', '--no-incremental', 'clients/python/hallmark']);
  expect(code, output).toBe(0);
}, 120_000);
