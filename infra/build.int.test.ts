import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { deleteNamespaceStreams } from '@hallmark/bus';
import { createTestDatabase, type TestDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../test/support/distributed-product.ts';
import { build } from './build.ts';

// The production build, run as production runs it: compiled JavaScript under plain node, no
// TypeScript loader (NODE_OPTIONS emptied), @hallmark/* resolved to dist/ by the export condition,
// the migrations read from beside dist/, against this machine's PostgreSQL, NATS and Redis.

const root = fileURLToPath(new URL('..', import.meta.url));
const nodeArgs = ['--conditions=hallmark-compiled', '--enable-source-maps'];

interface Started {
  child: ChildProcess;
  output: string[];
  exited: Promise<number | null>;
}

function startCompiled(service: string, env: Record<string, string>): Started {
  const child = spawn(process.execPath, [...nodeArgs, `services/${service}/dist/main.js`], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', NODE_OPTIONS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output, exited };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, processes: Started[]): Promise<T> {
  const deadline = Date.now() + 45_000;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    const dead = processes.find((started) => started.child.exitCode !== null);
    if (dead || Date.now() > deadline) {
      throw new Error(
        `${dead ? 'a process exited' : 'timed out'} waiting for ${what}:\n${processes.map((p) => p.output.join('')).join('\n---\n')}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('the production build', () => {
  beforeAll(() => {
    const written = build();
    expect(written).toBeGreaterThan(100);
  }, 120_000);

  it('puts compiled JavaScript in each dist/, the QR worker included, and no TypeScript or tests', () => {
    for (const service of ['gateway', 'code-service', 'verify-service', 'auction-service', 'compliance-service']) {
      expect(existsSync(join(root, 'services', service, 'dist/main.js')), service).toBe(true);
    }
    expect(existsSync(join(root, 'services/code-service/dist/handlers/qr-render-worker.js'))).toBe(true);
    const files = readdirSync(join(root, 'packages/sql/dist'), { recursive: true }).map(String);
    expect(files).toContain('index.js');
    expect(files.filter((file) => file.endsWith('.ts') || file.includes('.test.'))).toEqual([]);
  });

  it('stops a compiled service with exit 78 naming the missing variable', async () => {
    const started = startCompiled('gateway', {});
    expect(await started.exited).toBe(78);
    expect(started.output.join('')).toContain('HALLMARK_NATS_URL');
  });

  describe('the compiled gateway and code-service on PostgreSQL, NATS and Redis', () => {
    const natsUrl = process.env.HALLMARK_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
    const namespace = `build_${randomUUID().slice(0, 8)}`;
    const operatorKey = `svc_live_${randomBytes(32).toString('hex')}`;
    let database: TestDatabase;
    let url: string;
    let probeUrl: string;
    const processes: Started[] = [];
    const blobDir = mkdtempSync(join(tmpdir(), 'hallmark-build-blobs-'));

    beforeAll(async () => {
      database = await createTestDatabase('build');
      const [port, probePort] = [await freePort(), await freePort()];
      const env = {
        HALLMARK_NATS_URL: natsUrl,
        HALLMARK_DATABASE_URL: database.url,
        HALLMARK_REDIS_URL: process.env.HALLMARK_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
        HALLMARK_NAMESPACE: namespace,
        HALLMARK_LOG_LEVEL: 'warn',
        HALLMARK_MASTER_KEY: randomBytes(32).toString('hex'),
        HALLMARK_BUS_SECRET: randomBytes(32).toString('hex'),
        HALLMARK_BOOTSTRAP_KEY: operatorKey,
        HALLMARK_BLOB_DIR: blobDir,
      };
      // The compiled CLI migrates first (its migrations found beside each package's dist/).
      const migrated = await promisify(execFile)(process.execPath, [...nodeArgs, 'apps/hallmark/dist/cli.js', 'migrate'], {
        cwd: root,
        env: { PATH: process.env.PATH ?? '', NODE_OPTIONS: '', HALLMARK_DATABASE_URL: database.url },
      });
      expect(migrated.stdout).toMatch(/^compliance-service: applied 1, 2, 3/m);
      processes.push(startCompiled('gateway', { ...env, PORT: String(port), HALLMARK_HOST: '127.0.0.1' }));
      processes.push(startCompiled('code-service', { ...env, HALLMARK_PROBE_PORT: String(probePort) }));
      url = `http://127.0.0.1:${port}`;
      probeUrl = `http://127.0.0.1:${probePort}`;
      await until('the gateway to be ready', async () => ((await fetch(`${url}/ready`)).ok ? true : undefined), processes);
    }, 90_000);

    afterAll(async () => {
      for (const started of processes) started.child.kill('SIGTERM');
      await Promise.all(processes.map((started) => started.exited));
      await database?.drop();
      await deleteNamespaceStreams(natsUrl, namespace);
      rmSync(blobDir, { recursive: true, force: true });
    });

    it('serves: ready probes, a ping over NATS, a signed code stored by the migrations from dist, a PNG from the worker', async () => {
      const ready = await until(
        'code-service to be ready',
        async () => {
          const response = await fetch(`${probeUrl}/ready`);
          return response.ok ? ((await response.json()) as { checks: Record<string, unknown> }) : undefined;
        },
        processes,
      );
      expect(Object.keys(ready.checks).sort()).toEqual(expect.arrayContaining(['nats', 'postgres', 'redis']));
      const headers = { 'x-api-key': operatorKey, 'content-type': 'application/json' };
      const ping = await until(
        'code-service to answer a ping',
        async () => {
          const response = await fetch(`${url}/api/v1/system/ping/code-service`, {
            method: 'POST',
            headers: { 'x-api-key': operatorKey },
          });
          return response.status === 200 ? response : undefined;
        },
        processes,
      );
      expect(ping.status).toBe(200);
      // The operator signs a GTIN nobody owns.
      const generated = await fetch(`${url}/api/v1/code/generate`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ gtin: '09506000134352', serialNumber: 'BUILD-1', metadata: { name: 'Compiled' } }),
      });
      const body = (await generated.json()) as { data?: { url?: string }; url?: string };
      expect(generated.status, JSON.stringify(body)).toBe(201);
      const link = body.data?.url ?? body.url;
      expect(link).toMatch(/\/01\/09506000134352\//);
      const png = await fetch(`${url}/api/v1/code/qr?${new URLSearchParams({ url: String(link), format: 'png', size: '256' })}`, {
        headers: { 'x-api-key': operatorKey },
      });
      expect(png.status).toBe(200);
      expect(png.headers.get('content-type')).toBe('image/png');
      expect(
        Buffer.from(await png.arrayBuffer())
          .subarray(1, 4)
          .toString(),
      ).toBe('PNG');
    });
  });
});
