import { randomBytes, randomUUID } from 'node:crypto';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrateAccounts } from '@hallmark/accounts';
import { createFilesystemBlobStore } from '@hallmark/blob-store';
import { createInProcessBus } from '@hallmark/bus';
import { createMemoryCache, createRedisCache } from '@hallmark/cache';
import { routerPathOf, routes } from '@hallmark/contracts';
import { createLogger, readConfig } from '@hallmark/runtime';
import { createPgliteDatabase, createPostgresDatabase, createTestDatabase, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSilentLink } from '../../../test/support/silent-link.ts';
import { waitFor } from '../../../test/support/wait.ts';
import { buildGatewayApp } from './app.ts';
import { GatewayConfig } from './config.ts';
import { maxWaitingPerConnection } from './request-turns.ts';

// The gateway reads the cache epochs as it starts; routes read nothing until a request, and these tests send none.
let db: SqlDatabase;
beforeAll(async () => {
  db = await createPgliteDatabase();
  await migrateAccounts(db);
});
afterAll(() => db?.close());

const deps = () => ({
  config: readConfig(GatewayConfig, {}),
  bus: createInProcessBus(),
  db,
  eventStore: undefined as never,
  cache: createMemoryCache(),
  blobs: createFilesystemBlobStore(join(tmpdir(), 'hallmark-test-blobs')),
  clock: () => new Date(),
  log: createLogger({ instance: 'test', level: 'silent' }),
  readiness: {},
  requestTimeoutMs: 1_000,
});

describe('gateway routes', () => {
  it('serves every route of the contracts', async () => {
    const app = await buildGatewayApp(deps());
    await app.ready();
    for (const route of routes) {
      expect(app.hasRoute({ method: route.method, url: routerPathOf(route) }), `${route.method} ${route.path}`).toBe(true);
    }
    await app.close();
  });

  it('refuses to register a route that is not in the contracts', async () => {
    const app = await buildGatewayApp(deps());
    expect(() => app.get('/api/v1/undocumented', async () => 'hidden')).toThrow(/not in @hallmark\/contracts/);
    await app.close();
  });
});

/** A raw TCP connection to the gateway on loopback, for requests written by hand. */
const connectTo = (port: number) =>
  new Promise<Socket>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });

describe('requests in turns (HALLMARK_REQUESTS_PER_TURN)', () => {
  /** Answers `count` requests sent at once over real HTTP; each readiness check notes the loop's turn it ran in. */
  async function sendAtOnce(perTurn: number, count: number) {
    let loopTurn = 0;
    let ticking = true;
    const tick = () => {
      loopTurn += 1;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const turnsSeen: number[] = [];
    const app = await buildGatewayApp({
      ...deps(),
      config: readConfig(GatewayConfig, { HALLMARK_REQUESTS_PER_TURN: String(perTurn) }),
      readiness: {
        turn: async () => {
          turnsSeen.push(loopTurn);
        },
      },
      // Each request's own check, so that the checks count the requests run.
      readinessShareMs: 0,
    });
    try {
      await app.listen({ host: '127.0.0.1', port: 0 });
      const { port } = app.server.address() as AddressInfo;
      // Every connection open first, then every request written in one go: they reach the gateway together.
      const sockets = await Promise.all(Array.from({ length: count }, () => connectTo(port)));
      const answers = sockets.map(
        (socket) =>
          new Promise<string>((resolve, reject) => {
            let text = '';
            socket.setEncoding('utf8');
            socket.on('data', (chunk) => {
              text += chunk;
            });
            socket.once('end', () => resolve(text));
            socket.once('error', reject);
          }),
      );
      // Given time to accept them all, so that their requests are read in one pass of the loop.
      await new Promise((resolve) => setTimeout(resolve, 100));
      for (const socket of sockets) socket.write('GET /ready HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
      const texts = await Promise.all(answers);
      return {
        statuses: texts.map((text) => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1])),
        ids: texts.map((text) => /^x-request-id: (.+)$/im.exec(text)?.[1]),
        turnsSeen,
      };
    } finally {
      ticking = false;
      await app.close();
    }
  }

  it('answers every request of a burst, starting at most that many in one turn of the event loop', async () => {
    const { statuses, ids, turnsSeen } = await sendAtOnce(2, 40);
    expect(statuses).toEqual(Array.from({ length: 40 }, () => 200));
    expect(new Set(ids).size).toBe(40);
    const perTurn = new Map<number, number>();
    for (const turn of turnsSeen) perTurn.set(turn, (perTurn.get(turn) ?? 0) + 1);
    expect(turnsSeen).toHaveLength(40);
    expect(Math.max(...perTurn.values())).toBeLessThanOrEqual(2);
  });

  it('with turns off (0), answers every request of a burst as it is read, many in one turn', async () => {
    const { statuses, turnsSeen } = await sendAtOnce(0, 40);
    expect(statuses).toEqual(Array.from({ length: 40 }, () => 200));
    // What the first test rules out: without turns, requests read together run together.
    expect(new Set(turnsSeen).size).toBeLessThan(40);
  });

  it('does not run a request whose client left while it waited for its turn, and answers the next client', async () => {
    const checksRun: string[] = [];
    const app = await buildGatewayApp({
      ...deps(),
      config: readConfig(GatewayConfig, { HALLMARK_REQUESTS_PER_TURN: '1' }),
      readiness: {
        ran: async () => {
          checksRun.push('ran');
        },
      },
      readinessShareMs: 0,
    });
    try {
      await app.listen({ host: '127.0.0.1', port: 0 });
      const { port } = app.server.address() as AddressInfo;
      let received = 0;
      app.server.on('request', () => {
        received += 1;
      });
      const sockets = await Promise.all(Array.from({ length: 30 }, () => connectTo(port)));
      await new Promise((resolve) => setTimeout(resolve, 100));
      const closed = sockets.map((socket) => new Promise((resolve) => socket.resume().once('close', resolve)));
      // Each client sends its request and leaves at once: one turn a request, so all but the first few
      // are still waiting when their connections close.
      for (const socket of sockets) socket.end('GET /ready HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      await Promise.all(closed);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(received).toBe(30);
      expect(checksRun.length).toBeLessThanOrEqual(2);
      const after = await fetch(`http://127.0.0.1:${port}/ready`);
      expect(after.status).toBe(200);
      expect(checksRun.length).toBeLessThanOrEqual(3);
    } finally {
      await app.close();
    }
  });
});

describe('requests in turns against a pipelining client', () => {
  /** A gateway with the default turns, listening on loopback; `use` gets its port. */
  async function withGateway(use: (port: number) => Promise<void>) {
    const app = await buildGatewayApp(deps());
    try {
      await app.listen({ host: '127.0.0.1', port: 0 });
      await use((app.server.address() as AddressInfo).port);
    } finally {
      await app.close();
    }
  }

  /** Status lines of the answers read so far on a socket. */
  function statusesOf(socket: Socket): string[] {
    const statuses: string[] = [];
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
      // A status line may arrive split across two reads: it is taken once its three digits are here.
      for (let at = text.indexOf('HTTP/1.1 '); at >= 0 && text.length >= at + 12; at = text.indexOf('HTTP/1.1 ')) {
        statuses.push(text.slice(at + 9, at + 12));
        text = text.slice(at + 12);
      }
    });
    return statuses;
  }

  it('keeps answering others while one connection pipelines requests as fast as it can', async () => {
    await withGateway(async (port) => {
      const flooder = await connectTo(port);
      flooder.on('error', () => {});
      const flooded = statusesOf(flooder);
      const burst = 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'.repeat(200);
      let flooding = true;
      let sent = 0;
      const flood = (async () => {
        while (flooding) {
          // Written as fast as the socket takes them; the gateway decides how fast it reads.
          if (!flooder.write(burst)) await new Promise((resolve) => flooder.once('drain', resolve));
          else await new Promise((resolve) => setImmediate(resolve));
          sent += 200;
        }
      })();
      try {
        // Another client, one request at a time, is answered promptly throughout.
        const waits: number[] = [];
        for (let request = 0; request < 10; request += 1) {
          const started = performance.now();
          const answer = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(5_000) });
          expect(answer.status).toBe(200);
          waits.push(performance.now() - started);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        expect(Math.max(...waits)).toBeLessThan(1_000);
        expect(sent).toBeGreaterThan(1_000);
        expect(flooded.length).toBeGreaterThan(0);
        expect(new Set(flooded)).toEqual(new Set(['200']));
      } finally {
        flooding = false;
        await flood;
        flooder.destroy();
      }
    });
  });

  it('answers pipelined requests that change something in order, refusing those beyond the connection’s share with 503 and Retry-After', async () => {
    await withGateway(async (port) => {
      const socket = await connectTo(port);
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        text += chunk;
      });
      const ended = new Promise((resolve) => socket.once('end', resolve));
      const requests = Array.from(
        { length: 20 },
        (_, index) =>
          `POST /api/v1/nowhere-${index} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n${index === 19 ? 'Connection: close\r\n' : ''}\r\n{}`,
      );
      socket.write(requests.join(''));
      await ended;
      const answers = text.split(/(?=HTTP\/1\.1 )/);
      expect(answers).toHaveLength(20);
      const statuses = answers.map((answer) => answer.slice(9, 12));
      // All in one write, so read together: the first waits for its turn, as many more as may wait behind it, the rest are refused.
      expect(statuses.filter((status) => status === '404')).toHaveLength(maxWaitingPerConnection);
      expect(statuses.slice(0, maxWaitingPerConnection)).toEqual(Array.from({ length: maxWaitingPerConnection }, () => '404'));
      const refused = answers.slice(maxWaitingPerConnection);
      for (const answer of refused) {
        expect(answer.slice(9, 12)).toBe('503');
        expect(answer).toMatch(/^retry-after: 1\r$/im);
        expect(answer).toContain('"code":"SERVICE_UNAVAILABLE"');
      }
      // In order: each 404 names its own path.
      for (const [index, answer] of answers.slice(0, maxWaitingPerConnection).entries())
        expect(answer).toContain(`nowhere-${index}`);
    });
  });
});

/** A request to a gateway whose store went silent: answered 503 with Retry-After within 2 s, as an outage. */
async function expectAnsweredAsOutage(send: () => Promise<Response>) {
  const started = performance.now();
  const refused = await send();
  expect(performance.now() - started).toBeLessThan(2_000);
  expect(refused.status).toBe(503);
  expect(refused.headers.get('retry-after')).toBe('1');
  const body = (await refused.json()) as { error: { code: string; details?: { reason?: string } } };
  expect(body.error.code).toBe('SERVICE_UNAVAILABLE');
  expect(body.error.details?.reason).toBe('dependency');
}

describe('a Redis that stops answering (distributed form: the limits are counted there)', () => {
  it('answers 503 with Retry-After within the command timeout, not never, and counts again once Redis answers', async () => {
    const redisUrl = new URL(process.env.HALLMARK_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379');
    const link = await startSilentLink({ host: redisUrl.hostname, port: Number(redisUrl.port || 6379) });
    const keyPrefix = `test:${randomUUID().slice(0, 8)}:`;
    const cache = createRedisCache({ url: `redis://127.0.0.1:${link.port}`, keyPrefix, commandTimeoutMs: 300 });
    const app = await buildGatewayApp({ ...deps(), cache });
    try {
      await app.listen({ host: '127.0.0.1', port: 0 });
      const { port } = app.server.address() as AddressInfo;
      // A public route: its per-address limit is the first thing it spends.
      const verify = () => fetch(`http://127.0.0.1:${port}/api/v1/auction/public/verify/SN-1`);
      expect((await verify()).headers.get('x-ratelimit-limit')).not.toBeNull();

      link.silence();
      await expectAnsweredAsOutage(verify);

      link.speak();
      await waitFor('the limits counted again', async () =>
        (await verify()).headers.get('x-ratelimit-limit') !== null ? true : undefined,
      );
    } finally {
      await app.close();
      await cache.close().catch(() => {});
      await link.close();
    }
  });
});

describe('a PostgreSQL that stops answering on open connections (distributed form: keys are looked up there)', () => {
  it('answers 503 with Retry-After once the statement timeout passes, not after TCP gives up, and looks keys up again once it answers', async () => {
    const database = await createTestDatabase('gateway_silent_pg');
    const owner = createPostgresDatabase({ connectionString: database.url });
    await migrateAccounts(owner);
    await owner.close();
    const url = new URL(database.url);
    const link = await startSilentLink({ host: url.hostname, port: Number(url.port || 5432) });
    url.hostname = '127.0.0.1';
    url.port = String(link.port);
    const silentDb = createPostgresDatabase({ connectionString: url.toString(), maxConnections: 2, statementTimeoutMs: 300 });
    const app = await buildGatewayApp({ ...deps(), db: silentDb });
    try {
      await app.listen({ host: '127.0.0.1', port: 0 });
      const { port } = app.server.address() as AddressInfo;
      // A key nobody has: each new one is a look-up in PostgreSQL (unknown hashes are remembered for 5 s).
      const me = () =>
        fetch(`http://127.0.0.1:${port}/api/v1/accounts/me`, {
          headers: { 'x-api-key': `svc_live_${randomBytes(32).toString('hex')}` },
        });
      expect((await me()).status).toBe(401);

      link.silence();
      await expectAnsweredAsOutage(me);

      link.speak();
      await waitFor('keys looked up again', async () => ((await me()).status === 401 ? true : undefined));
    } finally {
      await app.close();
      await silentDb.close().catch(() => {});
      await link.close();
      await database.drop();
    }
  });
});
