// Starting the product for a benchmark, in its own processes, and measuring it with autocannon.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { deleteEventStream } from '@hallmark/bus';
import { createTestDatabase } from '@hallmark/sql';
import autocannon from 'autocannon';
import { startServiceProcess } from '../test/support/service-process.ts';
import { waitFor } from '../test/support/wait.ts';

export const operatorKey = `svc_live_${'b'.repeat(64)}`;

export interface RunningProduct {
  url: string;
  /** The process whose CPU time a request costs: the embedded process, or the distributed gateway. */
  pid: number;
  stop(): Promise<void>;
}

/** CPU time (user + system) a process has used, in microseconds, from /proc (Linux, 100 ticks/s). */
export function cpuMicroseconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

async function untilPingAnswers(url: string): Promise<void> {
  await waitFor(
    'the product',
    async () => {
      const response = await fetch(`${url}/api/v1/system/ping/code-service`, {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json' },
      });
      return response.ok ? true : undefined;
    },
    { timeoutMs: 60_000 },
  );
}

const randomPort = (from: number) => from + Math.floor(Math.random() * 500);

/**
 * Pins this process (the load generator) to one CPU, so that a server pinned to the other does not
 * compete with it; perf-ceilings.md found pinned runs steadier. Linux only (taskset).
 */
export function pinLoadGenerator(cpu: number): void {
  execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(process.pid)], { stdio: 'ignore' });
}

/** The embedded form, as `pnpm start` runs it, in a child process; on one CPU when `cpu` is given. */
export async function startEmbeddedProduct(env: Record<string, string> = {}, cpu?: number): Promise<RunningProduct> {
  const dataDir = await mkdtemp(join(tmpdir(), 'hallmark-bench-'));
  const port = randomPort(18_400);
  const command = [process.execPath, 'apps/hallmark/bin/hallmark.js', 'start'];
  const pinned = cpu === undefined ? command : ['taskset', '-c', String(cpu), ...command];
  const child: ChildProcess = spawn(pinned[0] as string, pinned.slice(1), {
    env: {
      ...process.env,
      PORT: String(port),
      HALLMARK_DATA_DIR: dataDir,
      HALLMARK_LOG_LEVEL: 'info',
      HALLMARK_BOOTSTRAP_KEY: operatorKey,
      ...env,
    },
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${port}`;
  await untilPingAnswers(url);
  return {
    url,
    pid: child.pid as number,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The distributed form: the gateway and the four services as five processes on NATS, PostgreSQL and Redis. */
export async function startDistributedProduct(): Promise<RunningProduct> {
  const database = await createTestDatabase('bench');
  const namespace = `bench_${randomUUID().slice(0, 8)}`;
  const port = randomPort(18_900);
  const nats = process.env.HALLMARK_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
  const env = {
    HALLMARK_NATS_URL: nats,
    HALLMARK_DATABASE_URL: database.url,
    HALLMARK_REDIS_URL: process.env.HALLMARK_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    HALLMARK_NAMESPACE: namespace,
    HALLMARK_LOG_LEVEL: 'info',
    HALLMARK_MASTER_KEY: '42'.repeat(32),
    HALLMARK_BOOTSTRAP_KEY: operatorKey,
  };
  const processes = [
    startServiceProcess('gateway', { ...env, PORT: String(port), HALLMARK_HOST: '127.0.0.1' }),
    ...['code-service', 'verify-service', 'auction-service', 'compliance-service'].map((service) =>
      startServiceProcess(service, env),
    ),
  ];
  const url = `http://127.0.0.1:${port}`;
  await untilPingAnswers(url);
  return {
    url,
    pid: processes[0]?.child.pid as number,
    async stop() {
      await Promise.all(processes.map((service) => service.stop()));
      await database.drop();
      await deleteEventStream(nats, namespace);
    },
  };
}

export interface LoadResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  errors: number;
  /** CPU the measured process spent per request, when a pid was given. */
  cpuMicrosPerRequest: number | undefined;
}

export interface LoadOptions {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  connections?: number;
  seconds: number;
  /** A server process to charge CPU time to. */
  pid?: number;
  /** Requests per second in all, instead of as many as the server answers. */
  overallRate?: number;
}

/** autocannon from this process against the product in others; non-2xx answers count as errors. */
export async function measure(options: LoadOptions): Promise<LoadResult> {
  const cpuBefore = options.pid === undefined ? 0 : cpuMicroseconds(options.pid);
  const result = await autocannon({
    url: options.url,
    method: options.method ?? 'GET',
    headers: options.headers ?? {},
    ...(options.body === undefined ? {} : { body: options.body }),
    connections: options.connections ?? 50,
    duration: options.seconds,
    ...(options.overallRate === undefined ? {} : { overallRate: options.overallRate }),
  });
  return {
    requestsPerSecond: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
    cpuMicrosPerRequest:
      options.pid === undefined
        ? undefined
        : Math.round((cpuMicroseconds(options.pid) - cpuBefore) / Math.max(1, result.requests.total)),
  };
}

export function machineLine(): string {
  return `${new Date().toISOString().slice(0, 10)}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}`;
}
