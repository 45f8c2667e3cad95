// What authentication and rate limiting cost a request, three ways:
// 1. In-process: the authenticator and the rate limiter alone, per call (no HTTP, no noise from
//    the load generator), and a keyed against an anonymous ping through fastify.inject.
// 2. Over HTTP on POST /code/verify, the route high-volume clients call: the embedded product
//    with authentication, scopes and limits against the same product acting as the key unchecked
//    (bench/route-server.ts), one server process each, pinned to CPU 1, the load generator on CPU 0.
// 3. Over HTTP on the worst case, POST /system/ping/code-service (public, does no work, checks
//    and rate-limits a key when one is sent), with and without a key: the embedded form as one
//    server answering both kinds of request and as one server per kind, and the distributed form
//    (five processes, NATS, Redis, PostgreSQL: it cannot be pinned apart on two cores and is
//    noisier).
// Every comparison interleaves its two sides (A B A B …) and reports medians.
//
//   pnpm bench:auth            (needs PostgreSQL, Redis and NATS)
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureOperator, migrateAccounts } from '@hallmark/accounts';
import { createFilesystemBlobStore } from '@hallmark/blob-store';
import { createInProcessBus } from '@hallmark/bus';
import { createMemoryCache, createRedisCache } from '@hallmark/cache';
import { createSqlEventStore } from '@hallmark/event-store';
import { buildGatewayApp, GatewayConfig } from '@hallmark/gateway';
import { createLogger, readConfig, servePing } from '@hallmark/runtime';
import { createPgliteDatabase } from '@hallmark/sql';
import { createAuthenticator } from '../services/gateway/src/auth/authenticator.ts';
import { createRateLimiter } from '../services/gateway/src/auth/rate-limiter.ts';
import {
  type LoadOptions,
  type LoadResult,
  machineLine,
  measure,
  measurePaced,
  operatorKey,
  pinLoadGenerator,
  type RunningProduct,
  startDistributedProduct,
  startEmbeddedProduct,
  untilQuiet,
} from './support.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 6);
const rounds = Number(process.env.BENCH_ROUNDS ?? 4);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

async function inProcessCost(): Promise<string[]> {
  const db = await createPgliteDatabase();
  await migrateAccounts(db);
  await ensureOperator({ db, eventStore: await createSqlEventStore(db) }, operatorKey, new Date());
  const clock = () => new Date();
  const authenticator = createAuthenticator({ db, clock });
  const redis = createRedisCache({ url: process.env.HALLMARK_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379', keyPrefix: 'bench:' });
  const perCall = async (calls: number, work: () => unknown) => {
    for (let i = 0; i < 1_000; i++) await work();
    const started = performance.now();
    for (let i = 0; i < calls; i++) await work();
    return ((performance.now() - started) / calls) * 1000;
  };
  const key = await authenticator.authenticate(operatorKey);
  const memoryLimiter = createRateLimiter({ cache: createMemoryCache(), clock });
  const redisLimiter = createRateLimiter({ cache: redis, clock });
  const authenticate = await perCall(200_000, () => authenticator.authenticate(operatorKey));
  const memorySpend = await perCall(200_000, () => memoryLimiter.spend(key, undefined, 1));
  // Sequential round trips: latency, not throughput (the gateway keeps many in flight).
  const redisSpend = await perCall(5_000, () => redisLimiter.spend(key, undefined, 1));
  await redis.close();

  // The whole gateway path of one request (routing, validation, hooks, the bus hop to the ping
  // handler, serialisation), through fastify.inject: no sockets and no load generator competing.
  const bus = createInProcessBus();
  const log = createLogger({ instance: 'bench', level: 'info', destination: { write: () => true } as never });
  const ping = await servePing('code-service', {
    name: 'code-service',
    instance: 'bench',
    config: {},
    log,
    infra: { bus } as never,
  } as never);
  const app = await buildGatewayApp({
    // The keyless ping spends its address's per-second limit (10 by default), one address here.
    config: readConfig(GatewayConfig, { HALLMARK_PUBLIC_RATE_LIMIT: '100000' }),
    bus,
    db,
    eventStore: await createSqlEventStore(db),
    cache: createMemoryCache(),
    blobs: createFilesystemBlobStore(join(tmpdir(), 'hallmark-bench-blobs')),
    log,
    readiness: {},
    requestTimeoutMs: 5_000,
    clock,
  });
  await app.ready();
  const inject = (withKey: boolean) => () =>
    app.inject({
      method: 'POST',
      url: '/api/v1/system/ping/code-service',
      headers: { 'content-type': 'application/json', ...(withKey ? { 'x-api-key': operatorKey } : {}) },
      payload: '{}',
    });
  // Rounds alternate which condition runs first, and the cost is the median of each round's
  // difference: drift in the machine's speed falls on both sides of every pair.
  const without: number[] = [];
  const withKey: number[] = [];
  const differences: number[] = [];
  for (let round = 0; round < 11; round++) {
    const first = round % 2 === 0;
    const a = first ? await perCall(10_000, inject(false)) : 0;
    const b = await perCall(10_000, inject(true));
    const c = first ? a : await perCall(10_000, inject(false));
    without.push(c);
    withKey.push(b);
    differences.push(b - c);
  }
  await app.close();
  await ping.stop();
  await db.close();
  const a = median(without);
  const b = median(withKey);
  const cost = median(differences);
  return [
    `| authenticate (cached key: SHA-256 + lookup + checks), alone | ${authenticate.toFixed(2)} µs |`,
    `| spend limits, in memory (embedded), alone | ${memorySpend.toFixed(2)} µs |`,
    `| spend limits, Redis Lua script, one round trip at a time (distributed) | ${redisSpend.toFixed(0)} µs |`,
    `| whole gateway request through fastify.inject, without key (median of 11 rounds × 10,000) | ${a.toFixed(1)} µs |`,
    `| whole gateway request through fastify.inject, with key | ${b.toFixed(1)} µs |`,
    `| cost of the key: median of the 11 paired differences | ${cost.toFixed(1)} µs (${((cost / a) * 100).toFixed(1)}% of the request) |`,
  ];
}

/** One side of a comparison: the load on one route of one running product. */
type Target = Omit<LoadOptions, 'seconds'> & { label: string };

/**
 * The same route without and with what is measured, interleaved (A B A B …) and summarised by the
 * median: at full speed, then at one fixed rate below either's capacity, where the server's CPU
 * per request compares like with like.
 */
async function compare(
  form: string,
  request: string,
  without: Target,
  withAuth: Target,
  products: readonly RunningProduct[],
): Promise<string[]> {
  // Each measurement starts once the products are idle again, so neither side pays for the other's
  // leftover work.
  const measured = async (target: Target) => {
    await untilQuiet(products);
    return measure({ ...target, seconds });
  };
  const paced = async (target: Target, rate: number) => {
    await untilQuiet(products);
    return measurePaced({ ...target, seconds, rate });
  };
  await measure({ ...withAuth, seconds: 2 });
  await measure({ ...without, seconds: 2 });
  const fullWithout: LoadResult[] = [];
  const fullWith: LoadResult[] = [];
  for (let round = 0; round < rounds; round++) {
    fullWithout.push(await measured(without));
    fullWith.push(await measured(withAuth));
  }
  const summary = (results: LoadResult[]) => ({
    rps: median(results.map((result) => result.requestsPerSecond)),
    p99: median(results.map((result) => result.p99)),
    cpu: median(results.map((result) => result.cpuMicrosPerRequest ?? 0)),
    errors: results.reduce((sum, result) => sum + result.errors, 0),
  });
  const a = summary(fullWithout);
  const b = summary(fullWith);
  // At full speed the load generator, not the server, may be what runs out (both share two
  // cores). At one fixed rate below either's capacity the server's CPU per request compares
  // like with like: that is the capacity auth costs.
  const rate = Math.round(Math.min(a.rps, b.rps) * 0.6);
  const fixedWithout: LoadResult[] = [];
  const fixedWith: LoadResult[] = [];
  for (let round = 0; round < rounds; round++) {
    fixedWithout.push(await paced(without, rate));
    fixedWith.push(await paced(withAuth, rate));
  }
  const c = summary(fixedWithout);
  const d = summary(fixedWith);
  const percent = (from: number, to: number) => `${(((to - from) / from) * 100).toFixed(1)}%`;
  return [
    `| ${form} | ${request}, full speed, ${without.label} | ${a.rps} | ${a.p99} | ${a.cpu} | ${a.errors} | |`,
    `| ${form} | ${request}, full speed, ${withAuth.label} | ${b.rps} | ${b.p99} | ${b.cpu} | ${b.errors} | ${percent(a.rps, b.rps)} requests/s, ${b.p99 - a.p99} ms p99 |`,
    `| ${form} | ${request}, ${rate}/s fixed, ${without.label} | ${c.rps} | ${c.p99} | ${c.cpu} | ${c.errors} | |`,
    `| ${form} | ${request}, ${rate}/s fixed, ${withAuth.label} | ${d.rps} | ${d.p99} | ${d.cpu} | ${d.errors} | ${percent(c.cpu, d.cpu)} server CPU per request, ${d.p99 - c.p99} ms p99 |`,
  ];
}

/**
 * The public ping route with and without a key: the worst case, a route that does no work.
 * `separate`: requests with a key go to one server process and requests without to another
 * (started alike), as production traffic is one or the other. In one process serving both, the
 * code they share (hooks, reply headers) is compiled by V8 for both shapes, and runs of the same
 * code measured the key at 5 µs or 20 µs depending on how that went.
 */
async function pingRoute(start: () => Promise<RunningProduct>, form: string, separate: boolean): Promise<string[]> {
  const product = await start();
  const keyed = separate ? await start() : product;
  try {
    const load = (withKey: boolean) => ({
      label: withKey ? 'with key' : 'without key',
      pid: (withKey ? keyed : product).pid,
      url: `${(withKey ? keyed : product).url}/api/v1/system/ping/code-service`,
      method: 'POST' as const,
      headers: { 'content-type': 'application/json', ...(withKey ? { 'x-api-key': operatorKey } : {}) },
      body: '{}',
    });
    return await compare(form, 'ping', load(false), load(true), separate ? [product, keyed] : [product]);
  } finally {
    await product.stop();
    if (separate) await keyed.stop();
  }
}

/**
 * POST /code/verify, the route high-volume clients call all day, with and without authentication,
 * scopes and limits: two embedded products composed alike (bench/route-server.ts), one of which
 * acts as the operator's key on every request without checking or counting anything. Each
 * verifies a code it generated itself; both are sent the same headers and body.
 */
async function verifyRoute(form: string): Promise<string[]> {
  const start = (unchecked: boolean) =>
    startEmbeddedProduct(unchecked ? { BENCH_UNCHECKED_KEY: '1' } : {}, 1, ['--import', 'tsx', 'bench/route-server.ts']);
  const checked = await start(false);
  const unchecked = await start(true);
  try {
    const load = async (product: RunningProduct, label: string) => {
      const headers = { 'content-type': 'application/json', 'x-api-key': operatorKey };
      const response = await fetch(`${product.url}/api/v1/code/generate`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ gtin: '09506000134352', serialNumber: 'AUTH-BENCH-1' }),
      });
      const code = (await response.json()) as { url: string };
      return {
        label,
        pid: product.pid,
        url: `${product.url}/api/v1/code/verify`,
        method: 'POST' as const,
        headers,
        body: JSON.stringify({ url: code.url }),
      };
    };
    return await compare(form, 'POST /code/verify', await load(unchecked, 'without auth'), await load(checked, 'with auth'), [
      checked,
      unchecked,
    ]);
  } finally {
    await checked.stop();
    await unchecked.stop();
  }
}

// The load comes from one address: lift the keyless ping's per-address limit (it still spends that
// counter, so "without a key" is the address limit's cost, "with" authentication and the account's).
const anyRate = { HALLMARK_PUBLIC_RATE_LIMIT: '100000' };
// Which comparisons run: BENCH_PARTS=verify,ping-embedded,ping-distributed (all by default).
const parts = (process.env.BENCH_PARTS ?? 'verify,ping-embedded,ping-distributed').split(',');
const micro = await inProcessCost();
pinLoadGenerator(0);
const http = [
  ...(parts.includes('verify') ? await verifyRoute('embedded, one server each, on CPU 1; load on CPU 0') : []),
  ...(parts.includes('ping-embedded')
    ? [
        ...(await pingRoute(
          () => startEmbeddedProduct(anyRate, 1),
          'embedded, one server for both, on CPU 1; load on CPU 0',
          false,
        )),
        ...(await pingRoute(() => startEmbeddedProduct(anyRate, 1), 'embedded, one server each, on CPU 1; load on CPU 0', true)),
      ]
    : []),
  ...(parts.includes('ping-distributed')
    ? await pingRoute(
        () => startDistributedProduct(anyRate),
        'distributed (Redis counters), one product for both, unpinned',
        false,
      )
    : []),
];
process.stdout.write(
  [
    `Auth cost, ${machineLine()}`,
    '',
    '| step, per request | cost |',
    '|---|---|',
    ...micro,
    '',
    `Over HTTP: 50 connections, ${rounds} interleaved rounds of ${seconds} s per condition, medians`,
    '',
    '| form | request | requests/s | p99 ms | server CPU µs/request | errors | difference |',
    '|---|---|---|---|---|---|---|',
    ...http,
    '',
  ].join('\n'),
);
