import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type EmbeddedProduct, startEmbedded } from '@hallmark/app';

export interface TestProduct {
  product: EmbeddedProduct;
  url: string;
  /** Every log line written so far. */
  logLines: string[];
  /** Moves the product's clock; `freeze` holds it still at a moment. */
  clock: { advance(ms: number): void; freeze(at: Date | undefined): void; now(): Date };
  stop(): Promise<void>;
}

/** The embedded product on a free port with its own data folder, a movable clock and captured logs. */
export async function startTestProduct(env: Record<string, string> = {}): Promise<TestProduct> {
  const dataDir = await mkdtemp(join(tmpdir(), 'hallmark-test-'));
  const logLines: string[] = [];
  let offsetMs = 0;
  let frozen: Date | undefined;
  const now = () => (frozen ? new Date(frozen) : new Date(Date.now() + offsetMs));
  const product = await startEmbedded(
    { PORT: '0', HALLMARK_HOST: '127.0.0.1', HALLMARK_DATA_DIR: dataDir, HALLMARK_LOG_LEVEL: 'debug', ...env },
    { clock: now, logDestination: { write: (line: string) => void logLines.push(line) } },
  );
  return {
    product,
    url: product.url,
    logLines,
    clock: {
      advance: (ms) => {
        offsetMs += ms;
      },
      freeze: (at) => {
        frozen = at;
      },
      now,
    },
    async stop() {
      await product.stop();
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
