// Issue #22, items 3-4: the Python client (clients/python) against the running product, in both forms.
// Its pytest suite (clients/python/tests) proves the behaviours over real HTTP: retries through a proxy
// that fails on purpose (one code for a POST that met 503 twice), Retry-After, paging 2,500 keys,
// every error code's class, offline verification and export audits that agree with the server, and a
// delivered webhook's signatures. Then mypy --strict over the package and its tests. Debian's python3-pytest,
// python3-cryptography and mypy are required (.ci/run installs them): without them these tests fail.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPostgresDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { call, type EmbeddedRunningProduct, startEmbeddedProduct } from '../support/embedded.ts';

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

/** Runs a statement on the product's database: the embedded form's PGlite, the distributed form's PostgreSQL. */
async function sql(product: RunningProduct, text: string, params: unknown[]): Promise<void> {
  if (product.form === 'embedded') {
    await (product as EmbeddedRunningProduct).test.product.db.query(text, params);
    return;
  }
  const db = createPostgresDatabase({ connectionString: product.databaseUrl as string, maxConnections: 1 });
  try {
    await db.query(text, params);
  } finally {
    await db.close();
  }
}

/** Keys test_paging.py pages through (its KEYS), beside the account's first. */
const pagedKeys = 2500;

/**
 * An account holding 2,500 API keys beside its first, for test_paging.py: the keys are written to
 * the database as test/e2e/sdk.test.ts writes its 2,500 (made over HTTP they take some 20 s a form,
 * as long as the rest of the suite), newest "bulk 1" a second before the account's own key. Answers
 * that key.
 */
async function accountWithManyKeys(product: RunningProduct): Promise<string> {
  const created = await call<{ account: { id: string }; apiKey: { secret: string } }>(product.url, 'POST', '/api/v1/accounts', {
    key: product.operatorKey,
    body: { name: 'python-paging', tier: 'enterprise' },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const accountId = created.body.account.id;
  await sql(
    product,
    `INSERT INTO api_keys (id, account_id, environment, name, key_hash, prefix, scopes, created_at)
     SELECT 'key_' || substr(md5($1 || '/' || i), 1, 20), $1, 'live', 'bulk ' || i, 'seeded-' || $2 || '-' || i,
            'svc_live_', ARRAY['assets:read'], now() - make_interval(secs => i)
     FROM generate_series(1, $3::int) AS i`,
    [accountId, randomUUID(), pagedKeys],
  );
  return created.body.apiKey.secret;
}

/** pytest's exit status, with its output printed when it failed. */
async function pytest(product: RunningProduct): Promise<number | null> {
  const { code, output } = await run(python, ['-m', 'pytest', 'clients/python/tests', '-q', '-p', 'no:cacheprovider'], {
    HALLMARK_TEST_BASE_URL: product.url,
    HALLMARK_TEST_OPERATOR_KEY: product.operatorKey,
    HALLMARK_TEST_PAGED_KEY: await accountWithManyKeys(product),
    PYTHONDONTWRITEBYTECODE: '1',
  });
  if (code !== 0) console.error(`pytest (${product.form} form) failed:\n${output}`);
  return code;
}

it('Debian Python has pytest and cryptography (CI installs python3-pytest and python3-cryptography)', async () => {
  expect(existsSync(python), `${python} is missing: apt-get install -y python3`).toBe(true);
  const { code, output } = await run(python, ['-c', 'import pytest, cryptography']);
  expect(code, `${output}\npytest or cryptography is missing: apt-get install -y python3-pytest python3-cryptography`).toBe(0);
});

// Both forms at once: the suite mostly waits (backoffs, Retry-After, deadlines), so one run after
// the other took twice as long for little more work.
describe('the Python client against the embedded and the distributed form, at once', () => {
  let products: RunningProduct[] = [];

  beforeAll(async () => {
    const started = await Promise.allSettled([
      startEmbeddedProduct({ ...productEnv, HALLMARK_LOG_LEVEL: 'warn' }),
      startDistributedProduct(productEnv),
    ]);
    products = started.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
    const failed = started.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
  }, 120_000);

  afterAll(async () => {
    await Promise.all(products.map((product) => product.stop()));
  });

  it('passes its pytest suite against each', async () => {
    const exits = await Promise.all(products.map(async (product) => [product.form, await pytest(product)] as const));
    expect(Object.fromEntries(exits)).toEqual({ embedded: 0, distributed: 0 });
  }, 300_000);
});

it('passes mypy --strict', async () => {
  const probe = await run(python, ['-c', 'import mypy']);
  expect(probe.code, `${probe.output}\nmypy is missing: apt-get install -y mypy (Debian's package; .ci/run installs it)`).toBe(0);
  // The package and its tests: the tests call the package as a user's typed code would.
  const { code, output } = await run(python, [
    '-m',
    'mypy',
    '--strict',
    '--no-incremental',
    'clients/python/hallmark',
    'clients/python/tests',
  ]);
  expect(code, output).toBe(0);
}, 120_000);
