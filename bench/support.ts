// Starting the product for a benchmark, in its own processes, and measuring it with autocannon.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { deleteNamespaceStreams } from '@hallmark/bus';
import { createTestDatabase } from '@hallmark/sql';
import autocannon from 'autocannon';
import { startServiceProcess } from '../test/support/service-process.ts';
import { waitFor } from '../test/support/wait.ts';

export const operatorKey = `svc_live_${'b'.repeat(64)}`;

export interface RunningProduct {
  url: string;
  /** The process whose CPU time a request costs: the embedded process, or the distributed gateway. */
  pid: number;
  /** Every process of the product (the embedded one, or the distributed form's five). */
  processes: Array<{ name: string; pid: number }>;
  /** The distributed form's PostgreSQL database; the embedded form's data folder. */
  databaseUrl?: string;
  dataDir?: string;
  stop(): Promise<void>;
}

/** CPU time (user + system) a process has used, in microseconds, from /proc (Linux, 100 ticks/s). */
export function cpuMicroseconds(pid: number): number {
  return cpuOf(`/proc/${pid}/stat`);
}

/**
 * CPU time of a process's main thread alone (its event loop, the thread whose id is the process's),
 * in microseconds: the rest of `cpuMicroseconds` went to libuv's pool, worker threads (the embedded
 * form's PGlite) and V8's helpers.
 */
export function eventLoopCpuMicroseconds(pid: number): number {
  return cpuOf(`/proc/${pid}/task/${pid}/stat`);
}

function cpuOf(statFile: string): number {
  const fields = readFileSync(statFile, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/**
 * Waits until every process of these products is nearly idle (under 10% of a core for 250 ms), at
 * most 15 s: work a product still does after its last measurement (a projection catching up, say)
 * would otherwise run during the next one, on the same CPU.
 */
export async function untilQuiet(products: readonly RunningProduct[]): Promise<void> {
  const pids = products.flatMap((product) => product.processes.map((process) => process.pid));
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const before = pids.map(cpuMicroseconds);
    await new Promise((resolve) => setTimeout(resolve, 250));
    if (pids.every((pid, index) => cpuMicroseconds(pid) - (before[index] ?? 0) < 25_000)) return;
  }
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
 * compete with it; the machine's ceilings (docs/ARCHITECTURE.md) were steadier pinned. Linux only (taskset).
 */
export function pinLoadGenerator(cpu: number): void {
  execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(process.pid)], { stdio: 'ignore' });
}

/**
 * The embedded form, as `pnpm start` runs it, in a child process; on one CPU when `cpu` is given.
 * `entry` is what Node runs: the product's CLI, or a bench script that composes the product itself.
 */
export async function startEmbeddedProduct(
  env: Record<string, string> = {},
  cpu?: number,
  entry: readonly string[] = ['apps/hallmark/bin/hallmark.js', 'start'],
): Promise<RunningProduct> {
  const dataDir = await mkdtemp(join(tmpdir(), 'hallmark-bench-'));
  const port = randomPort(18_400);
  const command = [process.execPath, ...entry];
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
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    await untilPingAnswers(url);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url,
    pid: child.pid as number,
    processes: [{ name: 'embedded', pid: child.pid as number }],
    dataDir,
    stop,
  };
}

/**
 * The distributed form: the gateway and the four services as five processes on NATS, PostgreSQL and Redis.
 * `gatewayEnv` adds settings of the gateway's own; `everyEnv` settings of every process (the gateway's too).
 */
export async function startDistributedProduct(
  gatewayEnv: Record<string, string> = {},
  everyEnv: Record<string, string> = {},
): Promise<RunningProduct> {
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
    // A made-up master key is for test deployments only.
    HALLMARK_ENVIRONMENT: 'test',
    // Signs the requests services accept over NATS (every process holds the same one).
    HALLMARK_BUS_SECRET: randomBytes(32).toString('hex'),
    HALLMARK_BOOTSTRAP_KEY: operatorKey,
    ...everyEnv,
  };
  const processes = [
    startServiceProcess('gateway', { ...env, ...gatewayEnv, PORT: String(port), HALLMARK_HOST: '127.0.0.1' }),
    ...['code-service', 'verify-service', 'auction-service', 'compliance-service'].map((service) =>
      startServiceProcess(service, env),
    ),
  ];
  const url = `http://127.0.0.1:${port}`;
  const stopAll = async () => {
    await Promise.all(processes.map((service) => service.stop()));
    // BENCH_KEEP_DATABASE=1 leaves the database for a look at what was stored (its name is printed).
    if (process.env.BENCH_KEEP_DATABASE === '1') process.stderr.write(`kept database: ${database.url}\n`);
    else await database.drop();
    await deleteNamespaceStreams(nats, namespace);
  };
  try {
    await untilPingAnswers(url);
  } catch (error) {
    // A product that did not come up (a port taken, say) leaves no process behind.
    await stopAll();
    throw error;
  }
  return {
    url,
    pid: processes[0]?.child.pid as number,
    processes: processes.map((service) => ({ name: service.name, pid: service.child.pid as number })),
    databaseUrl: database.url,
    stop: stopAll,
  };
}

const benchGtin = '09506000134352';

/** POSTs `body` to the product's API with `key`; throws unless the answer is 2xx, else resolves with its body. */
export async function post(url: string, path: string, key: string, body: unknown) {
  const response = await fetch(`${url}/api/v1${path}`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
  return (await response.json()) as Record<string, any>;
}

/** The value at fraction `p` (0.5, 0.99, 1 for the largest) of `sorted` (ascending), rounded; 0 when empty. */
export function percentileOf(sorted: readonly number[], p: number): number {
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0);
}

/** A brand (enterprise tier) with a key, the GTIN 09506000134352 it signs, and one code of it. */
export async function brandWithCode(product: RunningProduct): Promise<{ key: string; gtin: string; url: string }> {
  const brand = await post(product.url, '/accounts', operatorKey, { name: 'Bench brand', tier: 'enterprise' });
  const key = brand.apiKey.secret as string;
  // The brand signs only GTINs it owns (docs/SIGNING.md).
  await post(product.url, `/accounts/${brand.account.id}/gtins`, operatorKey, { gtin: benchGtin });
  const code = await post(product.url, '/code/generate', key, { gtin: benchGtin, serialNumber: 'BENCH-1', batchNumber: 'L1' });
  return { key, gtin: benchGtin, url: code.url as string };
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

/** The CPU a server process spent per request since `before` (its `cpuMicroseconds` then). */
function cpuPerRequest(pid: number | undefined, before: number, requests: number): number | undefined {
  return pid === undefined ? undefined : Math.round((cpuMicroseconds(pid) - before) / Math.max(1, requests));
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
    cpuMicrosPerRequest: cpuPerRequest(options.pid, cpuBefore, result.requests.total),
  };
}

export function machineLine(): string {
  return `${new Date().toISOString().slice(0, 10)}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}`;
}

export interface PacedOptions {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Requests per second, sent evenly spaced (open loop). */
  rate: number;
  seconds: number;
  /** Keep-alive connections at most (requests beyond them wait for one, and that wait counts). */
  connections?: number;
  /** A server process to charge CPU time to. */
  pid?: number;
}

/**
 * A fixed load at an even pace: request i is due at start + i / rate, whether or not earlier ones
 * have been answered, and its latency runs from when it was due (so a stalled server cannot hide
 * its stall by slowing the sender: no coordinated omission). autocannon's fixed rate releases each
 * connection's whole second of requests at once at the start of every second, which measures its
 * own bursts, not the server. Like autocannon, it writes prepared HTTP/1.1 bytes on keep-alive
 * sockets and reads only the status line and Content-Length, so it costs the machine little.
 */
export async function measurePaced(options: PacedOptions): Promise<LoadResult> {
  const target = new URL(options.url);
  const body = Buffer.from(options.body ?? '');
  const head = [
    `${options.method ?? 'GET'} ${target.pathname}${target.search} HTTP/1.1`,
    `host: ${target.host}`,
    ...Object.entries(options.headers ?? {}).map(([name, value]) => `${name}: ${value}`),
    `content-length: ${body.length}`,
    '',
    '',
  ].join('\r\n');
  const requestBytes = Buffer.concat([Buffer.from(head), body]);
  const latencies: number[] = [];
  let errors = 0;
  const due: number[] = [];
  const idle: Array<(dueAt: number) => void> = [];
  const total = Math.round(options.rate * options.seconds);
  let answered = 0;
  let finished: () => void = () => {};
  const allAnswered = new Promise<void>((resolve) => {
    finished = resolve;
  });
  const record = (dueAt: number, ok: boolean) => {
    latencies.push(performance.now() - dueAt);
    if (!ok) errors += 1;
    answered += 1;
    if (answered === total) finished();
  };

  /** One keep-alive connection: takes the next due request whenever it is free. */
  const openConnection = async () => {
    const socket = connect({ host: target.hostname, port: Number(target.port) });
    socket.setNoDelay(true);
    await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    let buffered: Buffer = Buffer.alloc(0);
    let current: number | undefined;
    const send = (dueAt: number) => {
      current = dueAt;
      socket.write(requestBytes);
    };
    const free = () => {
      current = undefined;
      const next = due.shift();
      if (next === undefined) idle.push(send);
      else send(next);
    };
    socket.on('data', (chunk: Buffer) => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end === -1 || current === undefined) return;
        const headers = buffered.subarray(0, end).toString('latin1');
        const length = Number(/content-length: *(\d+)/i.exec(headers)?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        const status = Number(headers.slice(9, 12));
        buffered = buffered.subarray(end + 4 + length);
        record(current, status >= 200 && status < 300);
        free();
      }
    });
    socket.on('error', () => {
      if (current !== undefined) record(current, false);
      current = undefined;
    });
    free();
    return socket;
  };

  const cpuBefore = options.pid === undefined ? 0 : cpuMicroseconds(options.pid);
  const sockets = await Promise.all(Array.from({ length: options.connections ?? 50 }, openConnection));
  const intervalMs = 1000 / options.rate;
  const started = performance.now();
  let sent = 0;
  while (sent < total) {
    const dueNow = Math.min(total, Math.floor((performance.now() - started) / intervalMs) + 1);
    for (; sent < dueNow; sent++) {
      const dueAt = started + sent * intervalMs;
      const connection = idle.shift();
      if (connection) connection(dueAt);
      else due.push(dueAt);
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  // A connection that died leaves its requests unanswered: they count as errors after a grace period.
  await Promise.race([allAnswered, new Promise((resolve) => setTimeout(resolve, 30_000).unref())]);
  errors += total - answered;
  const elapsedSeconds = (performance.now() - started) / 1000;
  for (const socket of sockets) socket.destroy();
  latencies.sort((a, b) => a - b);
  return {
    requestsPerSecond: Math.round(latencies.length / elapsedSeconds),
    p50: percentileOf(latencies, 0.5),
    p99: percentileOf(latencies, 0.99),
    errors,
    cpuMicrosPerRequest: cpuPerRequest(options.pid, cpuBefore, latencies.length),
  };
}
