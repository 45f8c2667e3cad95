import { randomBytes, randomUUID } from 'node:crypto';
import { createNatsBus, deleteNamespaceStreams, type NatsBus } from '@hallmark/bus';
import { type Cache, createRedisCache } from '@hallmark/cache';
import { createPostgresDatabase, createTestDatabase, testServerUrl } from '@hallmark/sql';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from './config.ts';
import { installationOf } from './installation.ts';
import { createLogger } from './logger.ts';
import { cacheNamespaceRegister, claimNamespace, type NamedRegister, type NamespaceClaim } from './namespace-claim.ts';

// Two installations (two databases) pointed at one NATS and one Redis under one HALLMARK_NAMESPACE
// would serve each other's requests and events. Each service claims the namespace for its
// database's installation before it takes work; the claim is shared by an installation's processes
// and lapses when none renews it. On this machine's NATS (JetStream) and Redis.

const natsUrl = process.env.HALLMARK_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const redisUrl = process.env.HALLMARK_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const log = createLogger({ instance: 'test', level: 'silent' });

const opened: Array<{ bus: NatsBus; cache: Cache; namespace: string }> = [];
const claims: NamespaceClaim[] = [];

/** What one process of some installation connects to: the namespace's NATS and Redis registers. */
async function registersOf(namespace: string, ttlMs: number, stores: Array<'NATS' | 'Redis'> = ['NATS', 'Redis']) {
  const bus = await createNatsBus({ servers: natsUrl, name: 'claim-test', prefix: namespace });
  const cache = createRedisCache({ url: redisUrl, keyPrefix: `${namespace}:` });
  opened.push({ bus, cache, namespace });
  const registers: NamedRegister[] = [];
  if (stores.includes('NATS')) registers.push({ store: 'NATS', register: await bus.namespaceRegister(ttlMs) });
  if (stores.includes('Redis')) registers.push({ store: 'Redis', register: cacheNamespaceRegister(cache, ttlMs) });
  return registers;
}

async function claim(
  namespace: string,
  installation: string,
  ttlMs: number,
  stores?: Array<'NATS' | 'Redis'>,
  installationNow?: () => Promise<string>,
) {
  const held = await claimNamespace({
    namespace,
    installation,
    registers: await registersOf(namespace, ttlMs, stores),
    log,
    ttlMs,
    ...(installationNow ? { installationNow } : {}),
  });
  claims.push(held);
  return held;
}

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

afterEach(async () => {
  for (const held of claims.splice(0)) held.stop();
  const namespaces = new Set<string>();
  for (const { bus, cache, namespace } of opened.splice(0)) {
    await bus.drain();
    await cache.close();
    namespaces.add(namespace);
  }
  for (const namespace of namespaces) await deleteNamespaceStreams(natsUrl, namespace);
});

const freshNamespace = () => `claim_${randomBytes(4).toString('hex')}`;

describe('claimNamespace', () => {
  it("refuses another installation with both ids and the store named, and admits the installation's other processes", async () => {
    const namespace = freshNamespace();
    const [first, second] = [randomUUID(), randomUUID()];
    await claim(namespace, first, 60_000);
    // Another process (replica, another service) of the same installation.
    await claim(namespace, first, 60_000);
    const error = await refusal(claim(namespace, second, 60_000));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(`HALLMARK_NAMESPACE "${namespace}" is in use on NATS by another installation`);
    expect((error as Error).message).toContain(`installation id ${first}`);
    expect((error as Error).message).toContain(`this database's is ${second}`);
  });

  it('refuses on Redis alone: two installations on one Redis under one namespace, each with a NATS of its own', async () => {
    const namespace = freshNamespace();
    await claim(namespace, randomUUID(), 60_000, ['Redis']);
    const error = await refusal(claim(namespace, randomUUID(), 60_000));
    expect((error as Error).message).toContain('is in use on Redis by another installation');
  });

  it('leaves no claim behind when refused: a refused start cannot lock out the installation that holds the namespace', async () => {
    const namespace = freshNamespace();
    const rightful = randomUUID();
    // The rightful installation's claim on NATS is gone (a NATS restarted without its store), its Redis claim holds.
    await claim(namespace, rightful, 60_000, ['Redis']);
    const error = await refusal(claim(namespace, randomUUID(), 60_000));
    expect((error as Error).message).toContain('is in use on Redis by another installation');
    const [nats] = await registersOf(namespace, 60_000, ['NATS']);
    expect(await nats?.register.holder()).toBeUndefined();
    // Another process of the rightful installation starts.
    expect(await refusal(claim(namespace, rightful, 60_000))).toBeUndefined();
  });

  it('stops claiming for an installation its database no longer names (restored or replaced under the process)', async () => {
    const namespace = freshNamespace();
    const ttlMs = 1_000;
    let databaseNames = randomUUID();
    const running = databaseNames;
    await claim(namespace, running, ttlMs, undefined, async () => databaseNames);
    databaseNames = randomUUID();
    // Its renewals stop, and the claim lapses a lifetime later: the processes started on the new database get the namespace.
    await new Promise((resolve) => setTimeout(resolve, 2.5 * ttlMs));
    expect(await refusal(claim(namespace, databaseNames, ttlMs))).toBeUndefined();
  });

  it('starts with Redis unreachable, claiming NATS, and leaves Redis to the renewals', async () => {
    const namespace = freshNamespace();
    const installation = randomUUID();
    const [nats] = await registersOf(namespace, 60_000, ['NATS']);
    if (!nats) throw new Error('no NATS register');
    // Nothing listens on port 1: every Redis command fails, as in an outage.
    const down = createRedisCache({ url: 'redis://127.0.0.1:1', keyPrefix: `${namespace}:`, commandTimeoutMs: 300 });
    try {
      const held = await claimNamespace({
        namespace,
        installation,
        registers: [nats, { store: 'Redis', register: cacheNamespaceRegister(down, 60_000) }],
        log,
      });
      claims.push(held);
      expect(await nats.register.holder()).toBe(installation);
      expect(await refusal(claim(namespace, randomUUID(), 60_000, ['NATS']))).toBeInstanceOf(ConfigError);
    } finally {
      await down.close().catch(() => undefined);
    }
  });

  it('lets one of two installations claiming a free namespace at once win, on each store', async () => {
    for (const stores of [['NATS'], ['Redis']] as Array<Array<'NATS' | 'Redis'>>) {
      const namespace = freshNamespace();
      const outcomes = await Promise.all(
        Array.from({ length: 4 }, () => refusal(claim(namespace, randomUUID(), 60_000, stores))),
      );
      expect(outcomes.filter((outcome) => outcome === undefined)).toHaveLength(1);
    }
  });

  it('keeps the claim while a process renews it, and frees it a lifetime after the last one stopped', async () => {
    const namespace = freshNamespace();
    const ttlMs = 1_000;
    const held = await claim(namespace, randomUUID(), ttlMs);
    await new Promise((resolve) => setTimeout(resolve, 2.5 * ttlMs));
    expect(await refusal(claim(namespace, randomUUID(), ttlMs))).toBeInstanceOf(ConfigError);
    held.stop();
    await new Promise((resolve) => setTimeout(resolve, 2 * ttlMs));
    // A new database (the old installation gone) takes the namespace.
    expect(await refusal(claim(namespace, randomUUID(), ttlMs))).toBeUndefined();
  }, 15_000);

  it('writes the claim again when its stream is gone (deleted, or a NATS restarted without its store)', async () => {
    const namespace = freshNamespace();
    const ttlMs = 1_000;
    const installation = randomUUID();
    await claim(namespace, installation, ttlMs);
    await deleteNamespaceStreams(natsUrl, namespace);
    // The next renewal (every quarter of the lifetime) makes the stream and writes the claim in it.
    await new Promise((resolve) => setTimeout(resolve, ttlMs));
    const error = await refusal(claim(namespace, randomUUID(), ttlMs, ['NATS']));
    expect((error as Error).message).toContain(`is in use on NATS by another installation (installation id ${installation}`);
  });
});

describe('installationOf', () => {
  it("names the fix when the service's role may not read the table (the roles.sql of a release before it)", async () => {
    const database = await createTestDatabase('installation');
    const role = `installation_${randomBytes(4).toString('hex')}`;
    const owner = createPostgresDatabase({ connectionString: database.url, maxConnections: 1 });
    try {
      await installationOf(owner);
      await owner.execScript(
        `CREATE ROLE ${role} LOGIN; GRANT USAGE ON SCHEMA public TO ${role}; GRANT SELECT ON schema_migrations TO ${role}`,
      );
      const url = new URL(database.url);
      url.username = role;
      const asService = createPostgresDatabase({ connectionString: url.toString(), maxConnections: 1 });
      try {
        await expect(installationOf(asService)).rejects.toThrow(
          /may not read the installation table: apply infra\/postgres\/roles.sql again/,
        );
      } finally {
        await asService.close();
      }
    } finally {
      await owner.close();
      await database.drop();
      const admin = createPostgresDatabase({ connectionString: testServerUrl, maxConnections: 1 });
      await admin.execScript(`DROP ROLE IF EXISTS ${role}`).finally(() => admin.close());
    }
  });

  it('gives every process of a database the same id, and each database its own', async () => {
    const [one, other] = [await createTestDatabase('installation'), await createTestDatabase('installation')];
    try {
      const connect = (url: string) => createPostgresDatabase({ connectionString: url, maxConnections: 2 });
      const [a, b, c] = [connect(one.url), connect(one.url), connect(other.url)];
      try {
        const [idA, idB, idC] = await Promise.all([installationOf(a), installationOf(b), installationOf(c)]);
        expect(idA).toMatch(/^[0-9a-f-]{36}$/);
        expect(idB).toBe(idA);
        expect(idC).not.toBe(idA);
      } finally {
        await Promise.all([a.close(), b.close(), c.close()]);
      }
    } finally {
      await Promise.all([one.drop(), other.drop()]);
    }
  });
});
