import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import type { Cache, ScanRecord } from './cache.ts';
import { consumeQuotaBatchScript, createQuotaBatches } from './redis-quota-batches.ts';

// INCRBY, and PEXPIRE when this call created the key. Returns the new value.
const incrementScript = `
local value = redis.call('INCRBY', KEYS[1], ARGV[1])
if value == tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return value`;

// KEYS: history hash, clients zset, repeat marker.
// ARGV: at, repeat window, window, client window, client, location ("lat,lon" or ""), retention,
// the location's reporter (its hash field is `location:<reporter>`: each party's locations apart).
// The scan window is a sliding estimate from two fixed windows kept in the hash (win, cur, prev):
// constant memory however often a code is scanned.
// Returns {total, first, repeat (0|1), scans in window, clients in window, previous location ("lat,lon,at" or ""), reported}.
const recordScanScript = `
local at = tonumber(ARGV[1])
local windowMs = tonumber(ARGV[3])
local total = redis.call('HINCRBY', KEYS[1], 'total', 1)
redis.call('HSETNX', KEYS[1], 'first', ARGV[1])
local repeatScan = 1
-- A repeat window of 0 (repeatWindowSeconds: 0) counts every scan; SET refuses PX 0.
if tonumber(ARGV[2]) <= 0 or redis.call('SET', KEYS[3], '1', 'PX', ARGV[2], 'NX') then repeatScan = 0 end
local index = math.floor(at / windowMs)
local fields = redis.call('HMGET', KEYS[1], 'win', 'cur', 'prev')
local win = tonumber(fields[1] or '-1')
local cur = tonumber(fields[2] or '0')
local prev = tonumber(fields[3] or '0')
if index == win + 1 then prev = cur; cur = 0 elseif index > win + 1 then prev = 0; cur = 0 end
if index > win then win = index end
if repeatScan == 0 then cur = cur + 1 end
redis.call('HSET', KEYS[1], 'last', ARGV[1], 'win', win, 'cur', cur, 'prev', prev)
local inWindow = math.floor(cur + prev * (1 - (at % windowMs) / windowMs))
redis.call('ZADD', KEYS[2], at, ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', at - tonumber(ARGV[4]))
local previous = ''
if ARGV[6] ~= '' then
  local field = 'location:' .. ARGV[8]
  previous = redis.call('HGET', KEYS[1], field) or ''
  redis.call('HSET', KEYS[1], field, ARGV[6] .. ',' .. ARGV[1])
end
for i = 1, 2 do redis.call('PEXPIRE', KEYS[i], ARGV[7]) end
return {total, redis.call('HGET', KEYS[1], 'first'), repeatScan, inWindow, redis.call('ZCARD', KEYS[2]),
  previous, redis.call('HGET', KEYS[1], 'reported') or ''}`;

// DECRBY by at most the counter's value, and only when it exists: its window (TTL) stays as it is.
const refundQuotaScript = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if used > 0 then redis.call('DECRBY', KEYS[1], math.min(used, tonumber(ARGV[1]))) end
return used`;

type ScriptedRedis = Redis & {
  hallmarkRefundQuota(key: string, cost: number): Promise<number>;
  hallmarkRecordScan(...keysThenArgs: Array<string | number>): Promise<[number, string, number, number, number, string, string]>;
  hallmarkIncrement(key: string, by: number, ttlMs: number): Promise<number>;
  hallmarkConsumeQuotaBatch(numberOfKeys: number, ...keysThenArgs: Array<string | number>): Promise<number[]>;
};

export interface RedisCacheOptions {
  /** `redis://` or, for TLS, `rediss://`; a password goes in it: `redis://:password@host:6379` (or `user:password@`). */
  url: string;
  /** Put in front of every key; isolates deployments and tests. */
  keyPrefix?: string;
  /** PEM file of the authorities trusted for a `rediss://` server's certificate, instead of the system's. */
  tlsCaFile?: string;
  /** CLIENT SETNAME on every (re)connection, so an operator (or the fault suite) can find this deployment's connections. */
  connectionName?: string;
  /**
   * How long a command may go unanswered before it fails (`Command timed out`, a store outage to
   * the caller: 503 and Retry-After). Default 2,000 ms; a healthy Redis answers in about a millisecond.
   */
  commandTimeoutMs?: number;
}

export const defaultRedisCommandTimeoutMs = 2_000;

/**
 * The cache over Redis (ioredis). Each counter operation is one Lua script: one round trip, atomic.
 * One account's concurrent quota spends (any of its keys) share a script call (redis-quota-batches.ts).
 */
export function createRedisCache(options: RedisCacheOptions): Cache {
  const commandTimeoutMs = options.commandTimeoutMs ?? defaultRedisCommandTimeoutMs;
  const redis = new Redis(options.url, {
    keyPrefix: options.keyPrefix ?? 'hallmark:',
    maxRetriesPerRequest: 2,
    enableOfflineQueue: true,
    lazyConnect: false,
    // A Redis that stops answering without closing the connection (hung, or gone behind a network
    // that drops packets) would otherwise hold every request that spends a limit for good: each
    // command fails after this long, and a connection that stays quiet as long is dropped and made
    // again (else every timed-out command would wait in its queue for a reply that never comes).
    commandTimeout: commandTimeoutMs,
    socketTimeout: commandTimeoutMs,
    // Commands cut off with a dropped connection are not sent again once it is back: their callers
    // were told of the outage, and a limit spent then would be spent for a refused request.
    autoResendUnfulfilledCommands: false,
    // Commands issued in the same tick (many requests' counters at once under load) leave in one
    // write instead of a write each.
    enableAutoPipelining: true,
    ...(options.connectionName ? { connectionName: options.connectionName } : {}),
    ...(options.tlsCaFile && /^rediss:/i.test(options.url) ? { tls: { ca: readFileSync(options.tlsCaFile) } } : {}),
  }) as ScriptedRedis;
  // Errors surface on the commands that meet them; without a listener ioredis would also print them.
  redis.on('error', () => {});
  redis.defineCommand('hallmarkIncrement', { numberOfKeys: 1, lua: incrementScript });
  redis.defineCommand('hallmarkRefundQuota', { numberOfKeys: 1, lua: refundQuotaScript });
  redis.defineCommand('hallmarkConsumeQuotaBatch', { lua: consumeQuotaBatchScript });
  const consumeQuotas = createQuotaBatches((keys, args) => redis.hallmarkConsumeQuotaBatch(keys.length, ...keys, ...args));
  redis.defineCommand('hallmarkRecordScan', { numberOfKeys: 3, lua: recordScanScript });

  return {
    async get(key) {
      return (await redis.get(key)) ?? undefined;
    },
    async set(key, value, { ttlMs } = {}) {
      if (ttlMs === undefined) await redis.set(key, value);
      else await redis.set(key, value, 'PX', ttlMs);
    },
    async setIfAbsent(key, value, ttlMs) {
      return (await redis.set(key, value, 'PX', ttlMs, 'NX')) === 'OK';
    },
    async delete(key) {
      await redis.del(key);
    },
    increment: (key, by, ttlMs) => redis.hallmarkIncrement(key, by, ttlMs),
    consumeQuotas,
    async refundQuotas(refunds) {
      await Promise.all(refunds.map((refund) => redis.hallmarkRefundQuota(refund.key, refund.cost)));
    },
    async recordScan(scan): Promise<ScanRecord> {
      // The {subject} hash tag keeps an item's keys in one Redis Cluster slot.
      const base = `scan:{${scan.subject}}`;
      const [total, first, repeat, scansInWindow, clientsInWindow, previous, reported] = await redis.hallmarkRecordScan(
        base,
        `${base}:clients`,
        `${base}:repeat:${scan.client}`,
        scan.atMs,
        scan.repeatWindowMs,
        scan.windowMs,
        scan.clientWindowMs,
        scan.client,
        scan.location ? `${scan.location.latitude},${scan.location.longitude}` : '',
        scan.retentionMs,
        scan.location?.reportedBy ?? '',
      );
      const [latitude, longitude, atMs] = previous ? previous.split(',').map(Number) : [];
      return {
        total,
        firstSeenMs: Number(first),
        lastSeenMs: scan.atMs,
        repeat: repeat === 1,
        scansInWindow,
        clientsInWindow,
        previousLocation:
          latitude === undefined || longitude === undefined || atMs === undefined ? undefined : { latitude, longitude, atMs },
        reported: reported === '1',
      };
    },
    async markReported(subject, retentionMs) {
      const key = `scan:{${subject}}`;
      await redis.multi().hset(key, 'reported', '1').pexpire(key, retentionMs).exec();
    },
    // Redis keeps the counters whatever becomes of this process.
    async persist() {},
    unsavedForMs: () => 0,
    async ping() {
      await redis.ping();
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
