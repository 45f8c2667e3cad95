// Baseline: a ping through gateway → bus → code-service → back, at 50 connections, in the embedded
// form (one process, in-process bus) and the distributed form (six processes over NATS).
// The servers run in child processes; this process only generates load. Results go to stdout as a
// Markdown table for docs/PERFORMANCE.md.
//
//   pnpm bench:ping            (needs PostgreSQL, Redis and NATS for the distributed form)
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { deleteEventStream } from '@hallmark/bus';
import { createTestDatabase } from '@hallmark/sql';
import autocannon from 'autocannon';
import { type ServiceProcess, startServiceProcess } from '../test/support/service-process.ts';
import { waitFor } from '../test/support/wait.ts';

const durationSeconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = 50;

interface Row {
  form: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  errors: number;
}

async function load(url: string, form: string): Promise<Row> {
  const options = {
    url: `${url}/api/v1/system/ping/code-service`,
    method: 'POST' as const,
    headers: { 'content-type': 'application/json' },
    body: '{}',
    connections,
  };
  await autocannon({ ...options, duration: 2 }); // warm-up
  const result = await autocannon({ ...options, duration: durationSeconds });
  return {
    form,
    requestsPerSecond: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
  };
}

async function ready(url: string) {
  await waitFor(
    'the gateway',
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

async function embedded(): Promise<Row> {
  const dataDir = await mkdtemp(join(tmpdir(), 'hallmark-bench-'));
  const port = 18_400 + Math.floor(Math.random() * 500);
  const child = spawn(process.execPath, ['apps/hallmark/bin/hallmark.js', 'start'], {
    env: { ...process.env, PORT: String(port), HALLMARK_DATA_DIR: dataDir, HALLMARK_LOG_LEVEL: 'info' },
    stdio: 'ignore',
  });
  try {
    const url = `http://127.0.0.1:${port}`;
    await ready(url);
    return await load(url, 'embedded (1 process, in-process bus)');
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function distributed(): Promise<Row> {
  const database = await createTestDatabase('bench');
  const namespace = `bench_${randomUUID().slice(0, 8)}`;
  const port = 18_900 + Math.floor(Math.random() * 500);
  const nats = process.env.HALLMARK_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
  const env = {
    HALLMARK_NATS_URL: nats,
    HALLMARK_DATABASE_URL: database.url,
    HALLMARK_REDIS_URL: process.env.HALLMARK_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    HALLMARK_NAMESPACE: namespace,
    HALLMARK_LOG_LEVEL: 'info',
    HALLMARK_MASTER_KEY: '42'.repeat(32),
  };
  const processes: ServiceProcess[] = [
    startServiceProcess('gateway', { ...env, PORT: String(port), HALLMARK_HOST: '127.0.0.1' }),
    ...['code-service', 'verify-service', 'auction-service', 'compliance-service'].map((service) =>
      startServiceProcess(service, env),
    ),
  ];
  try {
    const url = `http://127.0.0.1:${port}`;
    await ready(url);
    return await load(url, 'distributed (gateway + 4 services over NATS)');
  } finally {
    await Promise.all(processes.map((service) => service.stop()));
    await database.drop();
    await deleteEventStream(nats, namespace);
  }
}

const rows = [await embedded(), await distributed()];
const cpu = cpus()[0]?.model ?? 'unknown CPU';
process.stdout.write(
  [
    `Ping baseline, ${new Date().toISOString().slice(0, 10)}, ${cpus().length} × ${cpu}, Node ${process.version}, ${connections} connections, ${durationSeconds} s after a 2 s warm-up`,
    '',
    '| form | requests/s | p50 ms | p99 ms | errors |',
    '|---|---|---|---|---|',
    ...rows.map((row) => `| ${row.form} | ${row.requestsPerSecond} | ${row.p50} | ${row.p99} | ${row.errors} |`),
    '',
  ].join('\n'),
);
