import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect as connectTcp } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createNatsBus, deleteNamespaceStreams } from '@hallmark/bus';
import { createRedisCache } from '@hallmark/cache';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OwnedPostgres, startOwnPostgres } from '../../../test/faults/servers.ts';
import { freePort } from '../../../test/support/distributed-product.ts';
import { makeTestCertificates } from '../../../test/support/test-ca.ts';
import { DistributedConfig, readConfig } from './config.ts';
import { connectDistributed } from './infrastructure.ts';
import { createLogger } from './logger.ts';

// NATS, Redis and PostgreSQL over TLS, as a deployment that sets tls://, rediss://, sslmode=verify-full
// and HALLMARK_TLS_CA_FILE has them. This machine's servers run without TLS, so the test starts its
// own nats-server, redis-server and PostgreSQL cluster (test/faults/servers.ts; TCP only with TLS)
// on free loopback ports, with a certificate of a CA made here, and stops them afterwards.
// PostgreSQL's own refusals (no TLS, another CA, another host name) are in packages/sql's
// postgres-tls.int.test.ts.

const folder = mkdtempSync(join(tmpdir(), 'hallmark-tls-'));
const file = (name: string) => join(folder, name);
const natsPassword = randomBytes(12).toString('hex');
const redisPassword = randomBytes(12).toString('hex');
const children: ChildProcess[] = [];
let natsPort: number;
let redisPort: number;
let plainNatsPort: number;

async function listening(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connectTcp(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on 127.0.0.1:${port}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function run(command: string, args: string[]): void {
  const child = spawn(command, args, { stdio: 'ignore' });
  children.push(child);
}

let postgres: OwnedPostgres;

beforeAll(async () => {
  const certificates = makeTestCertificates(folder);
  [natsPort, redisPort, plainNatsPort] = [await freePort(), await freePort(), await freePort()];
  run('nats-server', [
    '-a',
    '127.0.0.1',
    '-p',
    String(natsPort),
    '-js',
    '-sd',
    file('jetstream'),
    '--tls',
    '--tlscert',
    file('server.pem'),
    '--tlskey',
    file('server.key'),
    '--user',
    'hallmark',
    '--pass',
    natsPassword,
  ]);
  // The same, without TLS: a client that asked for tls:// must refuse it.
  run('nats-server', ['-a', '127.0.0.1', '-p', String(plainNatsPort), '-js', '-sd', file('jetstream-plain')]);
  run('redis-server', [
    '--port',
    '0',
    '--bind',
    '127.0.0.1',
    '--tls-port',
    String(redisPort),
    '--tls-cert-file',
    file('server.pem'),
    '--tls-key-file',
    file('server.key'),
    '--tls-ca-cert-file',
    file('ca.pem'),
    '--tls-auth-clients',
    'no',
    '--requirepass',
    redisPassword,
    '--save',
    '',
    '--appendonly',
    'no',
  ]);
  await Promise.all([listening(natsPort), listening(redisPort), listening(plainNatsPort)]);
  postgres = await startOwnPostgres({
    tls: { certFile: certificates.serverCertFile, keyFile: certificates.serverKeyFile, caFile: certificates.caFile },
  });
}, 90_000);

afterAll(async () => {
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(
    children.map((child) => new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(null)))),
  );
  await postgres?.stop();
  rmSync(folder, { recursive: true, force: true });
}, 90_000);

const natsUrl = (password = natsPassword) => `tls://hallmark:${password}@127.0.0.1:${natsPort}`;
const redisUrl = (password = redisPassword) => `rediss://:${password}@127.0.0.1:${redisPort}`;
/** TLS with the certificate and host name checked, against the authorities HALLMARK_TLS_CA_FILE names. */
const databaseUrl = () => {
  const url = new URL(postgres.url);
  url.search = '?sslmode=verify-full';
  return url.toString();
};

describe('the distributed form over TLS, with credentials', () => {
  it('connects to NATS (tls://user:password@), Redis (rediss://:password@) and PostgreSQL (sslmode=verify-full) trusting HALLMARK_TLS_CA_FILE, and is ready', async () => {
    const lines: string[] = [];
    const log = createLogger({
      instance: 'tls-test',
      level: 'warn',
      destination: new Writable({
        write(chunk, _encoding, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    });
    const namespace = `tls_${randomBytes(4).toString('hex')}`;
    const config = readConfig(DistributedConfig, {
      HALLMARK_NATS_URL: natsUrl(),
      HALLMARK_REDIS_URL: redisUrl(),
      HALLMARK_DATABASE_URL: databaseUrl(),
      HALLMARK_TLS_CA_FILE: file('ca.pem'),
      HALLMARK_BUS_SECRET: randomBytes(32).toString('hex'),
      HALLMARK_NAMESPACE: namespace,
    });
    const infra = await connectDistributed(config, 'tls-test', log);
    try {
      await infra.readiness.nats?.();
      await infra.readiness.redis?.();
      await infra.readiness.postgres?.();
      expect(await infra.db.query('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()')).toEqual([{ ssl: true }]);
      await infra.cache.set('tls-check', 'over TLS', { ttlMs: 10_000 });
      expect(await infra.cache.get('tls-check')).toBe('over TLS');
      await infra.bus.serve('rpc.tls.echo', { queue: 'tls' }, async (payload) => payload);
      expect(await infra.bus.request('rpc.tls.echo', { over: 'TLS' })).toEqual({ ok: true, value: { over: 'TLS' } });
    } finally {
      await infra.close();
      await deleteNamespaceStreams(natsUrl(), namespace, file('ca.pem'));
    }
    // Nothing logged the passwords.
    expect(lines.join('')).not.toContain(natsPassword);
    expect(lines.join('')).not.toContain(redisPassword);
  });

  it('NATS: refuses a wrong password, a server certificate from another CA, and a server without TLS when tls:// was asked', async () => {
    const attempt = (servers: string, tlsCaFile?: string) =>
      createNatsBus({ servers, name: 'tls-test', prefix: 'tls_refused', ...(tlsCaFile ? { tlsCaFile } : {}) }).then(
        async (bus) => {
          await bus.drain();
          return 'connected';
        },
        (error: Error) => error.message,
      );
    expect(await attempt(natsUrl('wrong'), file('ca.pem'))).toMatch(/authoriz/i);
    expect(await attempt(natsUrl(), file('other.pem'))).not.toBe('connected');
    // Without a CA file the system's authorities apply, and they do not know this CA.
    expect(await attempt(natsUrl())).not.toBe('connected');
    expect(await attempt(`tls://127.0.0.1:${plainNatsPort}`, file('ca.pem'))).toMatch(/tls/i);
  });

  it('Redis: refuses a wrong password and a server certificate from another CA', async () => {
    const attempt = async (url: string, tlsCaFile: string) => {
      const cache = createRedisCache({ url, keyPrefix: 'tls:', tlsCaFile });
      try {
        await cache.ping();
        return 'connected';
      } catch (error) {
        return (error as Error).message;
      } finally {
        await cache.close();
      }
    };
    expect(await attempt(redisUrl(), file('ca.pem'))).toBe('connected');
    expect(await attempt(redisUrl('wrong'), file('ca.pem'))).toMatch(/WRONGPASS|invalid|NOAUTH/i);
    expect(await attempt(redisUrl(), file('other.pem'))).not.toBe('connected');
  });
});
