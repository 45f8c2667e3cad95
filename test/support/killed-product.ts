// What the tests of the embedded form killed mid-write share (test/e2e/hostile-embedded-kills and
// test/long/embedded-kills): the real `hallmark start` on a data folder of its own, killed and
// started again, and the checks of what it kept.
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { auditExport } from '@hallmark/client';
import { expect } from 'vitest';
import { call } from './embedded.ts';
import { type HallmarkServer as Server, startHallmarkServer } from './hallmark-server.ts';
import { waitFor } from './wait.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
export type Json = Record<string, any>;

export const gtin = '09506000134352';
const cleanups: (() => Promise<void>)[] = [];

/** Stops what the test started (servers killed, folders removed), last first: for afterEach. */
export async function cleanUp(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}

/** A server of this test's, killed after it (SIGKILL) if it still runs. */
export async function startServer(
  dataDir: string,
  env: Record<string, string> = {},
  options: { healthTimeoutMs?: number } = {},
): Promise<Server> {
  const server = await startHallmarkServer(dataDir, env, options);
  cleanups.push(server.dispose);
  return server;
}

export async function kill(server: Server) {
  server.child.kill('SIGKILL');
  expect((await server.exited).signal).toBe('SIGKILL');
}

export async function newDataDir(): Promise<string> {
  const dataDir = await mkdtemp(join(tmpdir(), 'hallmark-review-kills-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  return dataDir;
}

export const api = (
  url: string,
  key: string | undefined,
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) =>
  call<Json>(url, method, `/api/v1${path}`, {
    ...(key ? { key } : {}),
    ...(body !== undefined ? { body } : {}),
    ...(headers ? { headers } : {}),
  });

export function ok(response: { status: number; body: Json }, status = 200): Json {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  return response.body;
}

/** GTIN-14 `0950600013<n>` with its check digit: a GTIN of its own for each tenant of a test that makes several. */
export function gtinNumbered(n: number): string {
  const body = `0950600013${String(n).padStart(3, '0')}`;
  let sum = 0;
  for (let i = 0; i < 13; i++) sum += Number(body[i]) * (i % 2 === 0 ? 3 : 1);
  return `${body}${(10 - (sum % 10)) % 10}`;
}

export async function tenant(url: string, dataDir: string, tier = 'enterprise', withGtin: boolean | string = true) {
  const operator = (await readFile(join(dataDir, 'operator-key'), 'utf8')).trim();
  const created = ok(await api(url, operator, 'POST', '/accounts', { name: `Brand ${randomUUID().slice(0, 4)}`, tier }), 201);
  if (withGtin) {
    const granted = typeof withGtin === 'string' ? withGtin : gtin;
    ok(await api(url, operator, 'POST', `/accounts/${created.account.id}/gtins`, { gtin: granted }), 201);
  }
  return { key: created.apiKey.secret as string, accountId: created.account.id as string, operator };
}

/** Runs `work` over `items`, `concurrency` at a time. */
export async function pool<T, R>(items: readonly T[], concurrency: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      for (;;) {
        const index = next++;
        if (index >= items.length) return;
        results[index] = await work(items[index] as T);
      }
    }),
  );
  return results;
}

export async function listCodes(url: string, key: string): Promise<Json[]> {
  const all: Json[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = ok(await api(url, key, 'GET', `/codes?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`));
    all.push(...page.data);
    cursor = page.nextCursor ?? undefined;
    if (!cursor) return all;
  }
}

export const leafHash = (eventHashHex: string) =>
  createHash('sha256')
    .update(Buffer.concat([Buffer.from([0]), Buffer.from(eventHashHex, 'hex')]))
    .digest('hex');

/** A read that may wait for the Merkle projection after a restart (503 with Retry-After). */
export async function settled(url: string, key: string, path: string): Promise<{ status: number; body: Json }> {
  return waitFor(
    `GET ${path}`,
    async () => {
      const answer = await api(url, key, 'GET', path);
      return answer.status === 503 ? undefined : answer;
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
}

/** The chain check and the Merkle root of an asset agree, and its export audits valid offline. */
export async function checkAsset(
  url: string,
  key: string,
  assetId: string,
  audit: boolean,
  jwks?: Json,
): Promise<{ eventCount: number; problems: string[] }> {
  const problems: string[] = [];
  const verified = await settled(url, key, `/compliance/${assetId}/verify`);
  if (verified.status !== 200 || verified.body.isValid !== true)
    problems.push(`${assetId} verify ${verified.status} ${JSON.stringify(verified.body)}`);
  const root = await settled(url, key, `/compliance/${assetId}/merkle/root`);
  if (root.status !== 200) problems.push(`${assetId} root ${root.status} ${JSON.stringify(root.body)}`);
  else if (root.body.treeSize !== verified.body.eventCount) {
    problems.push(`${assetId} treeSize ${root.body.treeSize} but eventCount ${verified.body.eventCount}`);
  } else if (verified.body.eventCount === 1 && root.body.rootHash !== leafHash(verified.body.headHash)) {
    problems.push(`${assetId} root is not the leaf hash of its one event`);
  }
  if (audit && jwks) {
    const exported = await settled(url, key, `/compliance/${assetId}/export?format=json`);
    const report = auditExport(exported.body as never, jwks as never);
    if (!report.valid) problems.push(`${assetId} audit: ${report.problems.join('; ')}`);
    if (root.status === 200 && report.rootHash !== undefined && report.rootHash !== root.body.rootHash) {
      problems.push(`${assetId} export root ${report.rootHash} differs from merkle/root ${root.body.rootHash}`);
    }
  }
  return { eventCount: Number(verified.body.eventCount), problems };
}

export async function lockHolder(dataDir: string): Promise<Json | undefined> {
  try {
    return JSON.parse(await readFile(join(dataDir, 'hallmark.lock'), 'utf8')) as Json;
  } catch {
    return undefined;
  }
}
