import { rmSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type EmbeddedProduct, startEmbedded } from '@hallmark/app';
import type { RunningProduct } from './distributed-product.ts';

export interface TestProduct {
  product: EmbeddedProduct;
  url: string;
  /** Every log line written so far. */
  logLines: string[];
  /** Moves the product's clock; `freeze` holds it still at a moment. */
  clock: { advance(ms: number): void; freeze(at: Date | undefined): void; now(): Date };
  /** The product's data folder (PGlite, master key, operator key); deleted by `stop`. */
  dataDir: string;
  /** The settings it was started with (beside the test defaults). */
  env: Record<string, string>;
  /** Stops the product and keeps its data folder, as a process that exits does. */
  stopKeepingData(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A test's product holds little data: a buffer cache of 16MB (PGlite touches all of it at every
 * start) starts it ~0.4 s sooner, with ~0.5 s less CPU, than the default 128MB.
 */
const testPgliteCache = { HALLMARK_PGLITE_SHARED_BUFFERS: '16MB' };

/**
 * Settings that change what a first start stores (the master key seals what it writes; a bootstrap
 * key replaces the generated operator key; another event store keeps the log elsewhere): a product
 * started with one of them starts on a data folder of its own, never on a copy of the first start's.
 */
const settingsAFirstStartStores = ['HALLMARK_MASTER_KEY', 'HALLMARK_BOOTSTRAP_KEY', 'HALLMARK_ESDB_URL', 'HALLMARK_DATABASE_URL'];

/**
 * A data folder a first start made (PGlite created and every service's tables migrated, the master
 * key and the operator key written), made once in each test worker and copied for every product
 * started after it: the first start of an empty folder runs PGlite's initdb and every service's
 * migrations (5.2-5.9 s on the development machine), a start on a copy finds them done (2.3-2.4 s). The copies share the operator key and master
 * key (each product is still alone on its folder); the first start's own lines are in no copy's log.
 */
let firstStart: Promise<{ dataDir: string; operatorKey: string }> | undefined;

function firstStartFolder(): Promise<{ dataDir: string; operatorKey: string }> {
  firstStart ??= (async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'hallmark-first-start-'));
    process.once('exit', () => rmSync(dataDir, { recursive: true, force: true }));
    const product = await startEmbedded(
      { PORT: '0', HALLMARK_HOST: '127.0.0.1', HALLMARK_DATA_DIR: dataDir, HALLMARK_LOG_LEVEL: 'warn', ...testPgliteCache },
      { logDestination: { write: () => {} } },
    );
    await product.stop();
    if (!product.generatedOperatorKey) throw new Error('the first start of an empty data folder made no operator key');
    return { dataDir, operatorKey: product.generatedOperatorKey };
  })();
  return firstStart;
}

/**
 * The embedded product on a free port with its own data folder, a movable clock and captured logs.
 * The folder is a copy of a first start's (`firstStartFolder`) unless `env` holds a setting that
 * changes what a first start stores. (The first start itself is tested in apps/hallmark's tests.)
 */
export async function startTestProduct(env: Record<string, string> = {}): Promise<TestProduct> {
  const dataDir = await mkdtemp(join(tmpdir(), 'hallmark-test-'));
  const fresh = settingsAFirstStartStores.some((name) => env[name] !== undefined);
  const template = fresh ? undefined : await firstStartFolder();
  if (template) await cp(template.dataDir, dataDir, { recursive: true });
  let offsetMs = 0;
  let frozen: Date | undefined;
  const now = () => (frozen ? new Date(frozen) : new Date(Date.now() + offsetMs));
  const clock: TestProduct['clock'] = {
    advance: (ms) => {
      offsetMs += ms;
    },
    freeze: (at) => {
      frozen = at;
    },
    now,
  };
  const started = await startOnDataDir(dataDir, env, clock, []);
  // The copy's operator key was made by the first start: the test uses it as the one this start made.
  if (template) started.product = { ...started.product, generatedOperatorKey: template.operatorKey };
  return started;
}

/** The embedded form as a `RunningProduct`, with its test handle (clock, logs, PGlite database) beside. */
export interface EmbeddedRunningProduct extends RunningProduct {
  form: 'embedded';
  test: TestProduct;
}

/**
 * `startTestProduct` for suites that run in both forms (`describe.each` over a starter returning a
 * `RunningProduct`; the distributed one is `startDistributedProduct`).
 */
export async function startEmbeddedProduct(env: Record<string, string> = {}): Promise<EmbeddedRunningProduct> {
  const test = await startTestProduct(env);
  return {
    form: 'embedded',
    url: test.url,
    operatorKey: test.product.generatedOperatorKey as string,
    test,
    stop: () => test.stop(),
  };
}

/**
 * Stops `previous` without deleting its data folder and starts a new product on that folder, with
 * the same settings, clock and log lines: what a restart of `pnpm start` does. The new product
 * listens on another port (`url` changes) and, the operator key existing already, has no
 * `generatedOperatorKey`: keep the first product's.
 */
export async function restartTestProduct(
  previous: TestProduct,
  env: Record<string, string> = previous.env,
): Promise<TestProduct> {
  await previous.stopKeepingData();
  return startOnDataDir(previous.dataDir, env, previous.clock, previous.logLines);
}

async function startOnDataDir(
  dataDir: string,
  env: Record<string, string>,
  clock: TestProduct['clock'],
  logLines: string[],
): Promise<TestProduct> {
  const product = await startEmbedded(
    {
      PORT: '0',
      HALLMARK_HOST: '127.0.0.1',
      HALLMARK_DATA_DIR: dataDir,
      HALLMARK_LOG_LEVEL: 'debug',
      ...testPgliteCache,
      ...env,
    },
    { clock: clock.now, logDestination: { write: (line: string) => void logLines.push(line) } },
  );
  let stopped = false;
  const stopKeepingData = async () => {
    if (stopped) return;
    stopped = true;
    await product.stop();
  };
  return {
    product,
    url: product.url,
    logLines,
    clock,
    dataDir,
    env,
    stopKeepingData,
    async stop() {
      await stopKeepingData();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface ApiResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T & { error?: { code: string; message: string; details?: Record<string, unknown> } };
}

/** A JSON request to the API; `key` goes in x-api-key. */
export async function call<T = Record<string, unknown>>(
  url: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<ApiResponse<T>> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: {
      ...(options.key ? { 'x-api-key': options.key } : {}),
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...options.headers,
    },
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: (text ? JSON.parse(text) : {}) as ApiResponse<T>['body'] };
}

/** An enterprise account made by the operator (`POST /accounts`): its id and its first key's secret. */
export async function createEnterpriseAccount(
  url: string,
  operatorKey: string,
  name: string,
): Promise<{ id: string; key: string }> {
  const created = await call<{ account: { id: string }; apiKey: { secret: string } }>(url, 'POST', '/api/v1/accounts', {
    key: operatorKey,
    body: { name, tier: 'enterprise' },
  });
  if (created.status !== 201) throw new Error(`POST /accounts answered ${created.status}: ${JSON.stringify(created.body)}`);
  return { id: created.body.account.id, key: created.body.apiKey.secret };
}
