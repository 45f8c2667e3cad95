import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { deleteEventStream } from '@hallmark/bus';
import { createTestDatabase, type TestDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServiceProcess, startServiceProcess } from '../support/service-process.ts';
import { waitFor } from '../support/wait.ts';

// The distributed form: each service its own OS process, on this machine's real NATS, PostgreSQL
// and Redis, with a namespace and a database of this run's own.
const natsUrl = process.env.HALLMARK_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const redisUrl = process.env.HALLMARK_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const namespace = `e2e_${randomUUID().slice(0, 8)}`;

let database: TestDatabase;
let gatewayUrl: string;
let env: Record<string, string>;
const processes: ServiceProcess[] = [];

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== 'object' || !address) throw new Error('no port');
  return address.port;
}

function start(service: string, name = service, extraEnv: Record<string, string> = {}): ServiceProcess {
  const started = startServiceProcess(service, { ...env, ...extraEnv }, name);
  processes.push(started);
  return started;
}

async function ping(service: string, body: object = {}, requestId?: string) {
  const response = await fetch(`${gatewayUrl}/api/v1/system/ping/${service}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(requestId ? { 'x-request-id': requestId } : {}) },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> & { error?: { code: string } } };
}

beforeAll(async () => {
  database = await createTestDatabase('e2e');
  const port = await freePort();
  gatewayUrl = `http://127.0.0.1:${port}`;
  env = {
    HALLMARK_NATS_URL: natsUrl,
    HALLMARK_DATABASE_URL: database.url,
    HALLMARK_REDIS_URL: redisUrl,
    HALLMARK_NAMESPACE: namespace,
    HALLMARK_LOG_LEVEL: 'debug',
    HALLMARK_REQUEST_TIMEOUT_MS: '3000',
    HALLMARK_PROBE_PORT: '0',
    HALLMARK_MASTER_KEY: '42'.repeat(32),
  };
  start('gateway', 'gateway', { PORT: String(port), HALLMARK_HOST: '127.0.0.1' });
  start('code-service', 'code-service-1');
  start('code-service', 'code-service-2');
  start('verify-service');
  start('auction-service');
  start('compliance-service');
  await waitFor('the gateway to be ready', async () => ((await fetch(`${gatewayUrl}/ready`)).ok ? true : undefined), {
    timeoutMs: 60_000,
  });
  for (const service of ['code-service', 'verify-service', 'auction-service', 'compliance-service']) {
    await waitFor(`${service} to answer`, async () => ((await ping(service)).status === 200 ? true : undefined), {
      timeoutMs: 60_000,
    });
  }
});

afterAll(async () => {
  await Promise.all(processes.map((process) => process.stop('SIGTERM')));
  await database?.drop();
  await deleteEventStream(natsUrl, namespace);
});

describe('distributed form: five services as separate processes', () => {
  it('reaches every service over NATS and back, with the request id in both processes’ logs', async () => {
    for (const service of ['code-service', 'verify-service', 'auction-service', 'compliance-service']) {
      const requestId = `e2e-${service}-${randomUUID().slice(0, 8)}`;
      const { status, body } = await ping(service, {}, requestId);
      expect(status).toBe(200);
      expect(body).toMatchObject({ service, requestId });
      const servingProcesses = processes.filter((candidate) => candidate.name.startsWith(service));
      await waitFor(`${service} to log ${requestId}`, async () =>
        servingProcesses.some((candidate) =>
          candidate.lines.some((line) => line.requestId === requestId && line.msg === 'rpc answered'),
        )
          ? true
          : undefined,
      );
      const gateway = processes.find((candidate) => candidate.name === 'gateway');
      await waitFor(`the gateway to log ${requestId}`, async () =>
        gateway?.lines.some((line) => line.requestId === requestId && line.msg === 'request') ? true : undefined,
      );
    }
  });

  it('spreads requests to one service over its two replicas', async () => {
    const instances = new Set<string>();
    for (let i = 0; i < 40; i++) {
      const { status, body } = await ping('code-service');
      expect(status).toBe(200);
      instances.add(String(body.instance));
    }
    expect(instances.size).toBe(2);
  });

  it('serves liveness and readiness probes from a backend service', async () => {
    const service = processes.find((candidate) => candidate.name === 'auction-service');
    const started = await waitFor('the started line', async () => service?.lines.find((line) => line.msg === 'started'));
    const probe = `http://127.0.0.1:${started.probePort}`;
    expect((await fetch(`${probe}/health`)).status).toBe(200);
    const ready = await fetch(`${probe}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      status: 'ready',
      checks: { nats: { ok: true }, postgres: { ok: true }, redis: { ok: true } },
    });
  });

  it('turns a killed service into 503 within 2 s, and recovers when it comes back', async () => {
    const victim = processes.find((candidate) => candidate.name === 'verify-service');
    if (!victim) throw new Error('verify-service not started');
    await victim.stop('SIGKILL');
    const killedAt = Date.now();
    const unavailable = await waitFor(
      'a 503',
      async () => {
        const result = await ping('verify-service');
        return result.status === 503 ? result : undefined;
      },
      { timeoutMs: 2_000, intervalMs: 50 },
    );
    expect(Date.now() - killedAt).toBeLessThan(2_000);
    expect(unavailable.body.error?.code).toBe('SERVICE_UNAVAILABLE');

    start('verify-service', 'verify-service-restarted');
    const recovered = await waitFor(
      'verify-service to answer again',
      async () => {
        const result = await ping('verify-service');
        return result.status === 200 ? result : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    expect(recovered.body.service).toBe('verify-service');
  });

  it('finishes the request in flight when a service is told to stop', async () => {
    const service = processes.find((candidate) => candidate.name === 'compliance-service');
    if (!service) throw new Error('compliance-service not started');
    const inFlight = ping('compliance-service', { delayMs: 1_500 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const exitCode = service.stop('SIGTERM');
    const { status } = await inFlight;
    expect(status).toBe(200);
    expect(await exitCode).toBe(0);
    expect((await ping('compliance-service')).status).toBe(503);
  });

  it('refuses to start with a bad setting, naming the variable', async () => {
    const misconfigured = start('code-service', 'misconfigured', {
      HALLMARK_NATS_URL: 'localhost:4222',
      HALLMARK_REQUEST_TIMEOUT_MS: 'soon',
    });
    expect(await misconfigured.exited).toBe(78);
    const stderr = misconfigured.stderr.join('');
    expect(stderr).toContain('HALLMARK_NATS_URL');
    expect(stderr).toContain('HALLMARK_REQUEST_TIMEOUT_MS');
  });
});
