import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { claimStreamName, eventStreamName } from '@hallmark/bus';
import { broadcasts } from '@hallmark/contracts';
import { createTestDatabase, type TestDatabase } from '@hallmark/sql';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NatsUser, natsAuthorization, natsUsers, passwordVariableOf } from '../../infra/nats-permissions.ts';
import { freePort } from '../support/distributed-product.ts';
import { call as callApi } from '../support/embedded.ts';
import { type ServiceProcess, startServiceProcess, untilServicesAnswer } from '../support/service-process.ts';
import { waitFor } from '../support/wait.ts';

// The distributed form on a nats-server of this file's own, configured with infra/nats-permissions.ts:
// one user a service, each allowed only its own subjects. Everything a tenant does works (requests,
// replies, events, broadcasts, the installation claim) and the server logs no violation; then a
// client holding one service's password (leaked) is refused what that service may not do: reading
// other services' requests or replies, reading the event stream, publishing events.

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;
const redisUrl = process.env.HALLMARK_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const namespace = `perm_${randomUUID().slice(0, 8)}`;
const operatorKey = `svc_live_${randomBytes(32).toString('hex')}`;
// Led by a letter, as the deployments' are: nats-server parses a variable's value, and hex such as
// `3e8f…` or all digits is read as a number (and refused).
const passwords = Object.fromEntries(natsUsers.map((user) => [user, `p${randomBytes(16).toString('hex')}`])) as Record<
  NatsUser,
  string
>;
const services = ['gateway', 'code-service', 'verify-service', 'auction-service', 'compliance-service'] as const;

let natsDir: string;
let natsServer: ChildProcess;
let natsPort: number;
let database: TestDatabase;
let gatewayUrl: string;
let env: Record<string, string>;
const processes: ServiceProcess[] = [];
const natsUrlOf = (user: NatsUser) => `nats://${user}:${passwords[user]}@127.0.0.1:${natsPort}`;
const serverLog = async () => readFile(join(natsDir, 'server.log'), 'utf8').catch(() => '');
const api = async (method: string, path: string, key: string, body?: unknown) => {
  const { status, body: answer } = await callApi(gatewayUrl, method, `/api/v1${path}`, {
    key,
    ...(body === undefined ? {} : { body }),
  });
  return { status, body: answer as Json };
};

beforeAll(async () => {
  natsDir = await mkdtemp(join(tmpdir(), 'hallmark-nats-permissions-'));
  // A port found free may be taken by another file's server before nats-server binds it: then it
  // exits, and it starts again on another.
  for (let attempt = 1; ; attempt++) {
    natsPort = await freePort();
    await writeFile(
      join(natsDir, 'server.conf'),
      `listen: "127.0.0.1:${natsPort}"\njetstream { store_dir: "${join(natsDir, 'js')}" }\n${natsAuthorization(namespace)}`,
    );
    await rm(join(natsDir, 'server.log'), { force: true });
    const passwordEnv = Object.fromEntries(natsUsers.map((user) => [passwordVariableOf(user), passwords[user]]));
    const started = spawn('/usr/sbin/nats-server', ['-c', join(natsDir, 'server.conf'), '-l', join(natsDir, 'server.log')], {
      env: { PATH: process.env.PATH ?? '', ...passwordEnv },
      stdio: 'ignore',
    });
    natsServer = started;
    const ready = await waitFor(
      'nats-server to be ready or to exit',
      async () => ((await serverLog()).includes('Server is ready') ? 'ready' : started.exitCode !== null ? 'exited' : undefined),
      { timeoutMs: 30_000, intervalMs: 50 },
    ).catch(async (error: Error) => {
      throw new Error(`${error.message}; its log:\n${await serverLog()}`);
    });
    if (ready === 'ready') break;
    if (attempt === 3) throw new Error(`nats-server did not start:\n${await serverLog()}`);
  }

  database = await createTestDatabase('nats_permissions');
  const port = await freePort();
  gatewayUrl = `http://127.0.0.1:${port}`;
  env = {
    HALLMARK_DATABASE_URL: database.url,
    HALLMARK_REDIS_URL: redisUrl,
    HALLMARK_NAMESPACE: namespace,
    HALLMARK_LOG_LEVEL: 'info',
    HALLMARK_REQUEST_TIMEOUT_MS: '5000',
    HALLMARK_MASTER_KEY: randomBytes(32).toString('hex'),
    HALLMARK_BUS_SECRET: randomBytes(32).toString('hex'),
    HALLMARK_BOOTSTRAP_KEY: operatorKey,
  };
  for (const service of services) {
    const own = { ...env, HALLMARK_NATS_URL: natsUrlOf(service) };
    processes.push(
      startServiceProcess(service, service === 'gateway' ? { ...own, PORT: String(port), HALLMARK_HOST: '127.0.0.1' } : own),
    );
  }
  try {
    await untilServicesAnswer(gatewayUrl, services.slice(1), processes);
  } catch (error) {
    console.error(`--- nats-server\n${await serverLog()}`);
    throw error;
  }
}, 120_000);

afterAll(async () => {
  await Promise.all(processes.map((started) => started.stop('SIGTERM')));
  natsServer?.kill('SIGTERM');
  await database?.drop();
  if (natsDir) await rm(natsDir, { recursive: true, force: true });
});

/** The error a subscription gets for `subject`, or undefined if none comes within 2 s. */
async function subscriptionError(nc: NatsConnection, subject: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), 2_000);
    nc.subscribe(subject, {
      callback: (error) => {
        if (!error) return;
        clearTimeout(timer);
        resolve(error.message);
      },
    });
    void nc.flush();
  });
}

describe('the distributed form with a NATS user a service (infra/nats-permissions.ts)', () => {
  it('works end to end (generate, verify, scans, a report’s block, compliance) with no violation in the server’s log', async () => {
    const created = await api('POST', '/accounts', operatorKey, { name: `Brand ${randomUUID()}`, tier: 'enterprise' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const owner = { accountId: created.body.account.id as string, key: created.body.apiKey.secret as string };
    const gtin = '09506000134352';
    const granted = await api('POST', `/accounts/${owner.accountId}/gtins`, operatorKey, { gtin });
    expect(granted.status, JSON.stringify(granted.body)).toBe(201);
    const reporter = await api('POST', '/accounts', operatorKey, { name: `Reporter ${randomUUID()}`, tier: 'enterprise' });
    const reporterKey = reporter.body.apiKey.secret as string;

    const generated = await api('POST', '/code/generate', owner.key, { gtin, serialNumber: 'PERM-1' });
    expect(generated.status, JSON.stringify(generated.body)).toBe(201);
    const seized = await api('POST', '/code/generate', owner.key, { gtin, serialNumber: 'PERM-2' });
    expect(seized.status, JSON.stringify(seized.body)).toBe(201);
    // gateway -> verify-service -> code-service and compliance-service; the scan event to the stream.
    const verified = await api('POST', '/code/verify', reporterKey, { url: generated.body.url });
    expect(verified.body).toMatchObject({ verdict: 'AUTHENTIC' });
    await waitFor('the scan in the owner’s history (an event published and consumed)', async () => {
      const scans = await api('GET', '/scans', owner.key);
      return JSON.stringify(scans.body).includes('PERM-1') ? true : undefined;
    });
    // A block broadcast by verify-service, taken by every replica.
    const report = await api('POST', '/code/report', reporterKey, { url: seized.body.url, reason: 'bought at a market' });
    expect(report.status, JSON.stringify(report.body)).toBe(201);
    const confirmed = await api('POST', `/code/reports/${report.body.reportId}/confirm`, owner.key, { reason: 'Seized' });
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    expect((await api('POST', '/code/verify', reporterKey, { url: seized.body.url })).body).toMatchObject({
      verdict: 'SUSPICIOUS',
    });
    const history = await api('GET', `/compliance/${generated.body.assetId}/verify`, owner.key);
    expect(history.status, JSON.stringify(history.body)).toBe(200);
    // The operator CLI, as its own user: a key it revokes is broadcast to the gateway.
    const cli = fileURLToPath(new URL('../../apps/hallmark/bin/hallmark.js', import.meta.url));
    const keyId = reporter.body.apiKey.id as string;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [cli, 'keys', 'revoke', '--account', reporter.body.account.id, '--id', keyId, '--env', reporter.body.apiKey.environment],
      { env: { PATH: process.env.PATH ?? '', ...env, HALLMARK_NATS_URL: natsUrlOf('hallmark-cli') } },
    );
    expect(stdout).toContain(`revoked ${keyId}`);
    expect((await api('GET', '/keys', reporterKey)).status).toBe(401);

    const log = await serverLog();
    expect(log.split('\n').filter((line) => /violation/i.test(line))).toEqual([]);
    for (const started of processes) {
      expect(
        started.lines.filter((line) => /permission/i.test(JSON.stringify(line))),
        started.name,
      ).toEqual([]);
    }
  });

  it('refuses a client holding the gateway’s password what the gateway may not do', async () => {
    const leaked = await connect({ servers: `127.0.0.1:${natsPort}`, user: 'gateway', pass: passwords.gateway });
    try {
      for (const subject of [
        '>',
        `${namespace}.rpc.verify-service.>`,
        '_INBOX.>',
        '_INBOX.verify-service.>',
        `${namespace}.events.>`,
        // A block confirmed: only verify-service sends and reads it (a replay within its window needs both).
        `${namespace}.${broadcasts.codeBlocked}`,
      ]) {
        expect(await subscriptionError(leaked, subject), subject).toMatch(/Permissions Violation for Subscription/);
      }
      // Reading the event stream through a consumer of its own, and publishing a scan event.
      const spying = await leaked
        .request(
          `$JS.API.CONSUMER.CREATE.${eventStreamName(namespace)}.spy`,
          JSON.stringify({ stream_name: eventStreamName(namespace), config: { durable_name: 'spy' } }),
          { timeout: 1_000 },
        )
        .then(
          () => 'answered',
          (error: Error) => error.message,
        );
      expect(spying).not.toBe('answered');
      leaked.publish(`${namespace}.events.scans.recorded`, JSON.stringify({ scans: [] }));
      leaked.publish(`$JS.API.STREAM.DELETE.${claimStreamName(namespace)}`, '');
      leaked.publish(`${namespace}.${broadcasts.codeBlockLifted}`, '{}');
      await leaked.flush();
      await waitFor('the server to log the refused publishes', async () => {
        const log = await serverLog();
        return [
          `$JS.API.CONSUMER.CREATE.${eventStreamName(namespace)}.spy`,
          `${namespace}.events.scans.recorded`,
          '$JS.API.STREAM.DELETE',
          `${namespace}.${broadcasts.codeBlockLifted}`,
        ].every((subject) => log.includes(`Publish Violation - User "gateway", Subject "${subject}`))
          ? true
          : undefined;
      });
    } finally {
      await leaked.close();
    }
  });

  it('refuses a client holding verify-service’s password another service’s requests, the gateway’s replies and a replay of its own requests', async () => {
    const leaked = await connect({ servers: `127.0.0.1:${natsPort}`, user: 'verify-service', pass: passwords['verify-service'] });
    try {
      for (const subject of [`${namespace}.rpc.code-service.>`, '_INBOX.gateway.>', `${namespace}.rpc.>`]) {
        expect(await subscriptionError(leaked, subject), subject).toMatch(/Permissions Violation for Subscription/);
      }
      // It reads its own requests but may not send one of them again (a replay) to its own subject.
      leaked.publish(`${namespace}.rpc.verify-service.verifyCode`, JSON.stringify({}));
      await leaked.flush();
      await waitFor('the server to log the refused replay', async () =>
        (await serverLog()).includes(
          `Publish Violation - User "verify-service", Subject "${namespace}.rpc.verify-service.verifyCode"`,
        )
          ? true
          : undefined,
      );
    } finally {
      await leaked.close();
    }
  });
});
