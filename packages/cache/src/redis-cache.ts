import { Redis } from 'ioredis';
import type { Cache, QuotaDecision } from './cache.ts';

// INCRBY, and PEXPIRE when this call created the key. Returns the new value.
const incrementScript = `
local value = redis.call('INCRBY', KEYS[1], ARGV[1])
if value == tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return value`;

// Spend ARGV[1] units against limit ARGV[2] if they fit; the key expires at ARGV[3] (Unix ms).
// Returns {allowed (1|0), used}.
const consumeQuotaScript = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local cost = tonumber(ARGV[1])
if used + cost > tonumber(ARGV[2]) then return {0, used} end
used = redis.call('INCRBY', KEYS[1], cost)
redis.call('PEXPIREAT', KEYS[1], ARGV[3])
return {1, used}`;

type ScriptedRedis = Redis & {
  hallmarkIncrement(key: string, by: number, ttlMs: number): Promise<number>;
  hallmarkConsumeQuota(key: string, cost: number, limit: number, resetAtMs: number): Promise<[number, number]>;
};

export interface RedisCacheOptions {
  url: string;
  /** Put in front of every key; isolates deployments and tests. */
  keyPrefix?: string;
}

/** The cache over Redis (ioredis). Each counter operation is one Lua script: one round trip, atomic. */
export function createRedisCache(options: RedisCacheOptions): Cache {
  const redis = new Redis(options.url, {
    keyPrefix: options.keyPrefix ?? 'hallmark:',
    maxRetriesPerRequest: 2,
    enableOfflineQueue: true,
    lazyConnect: false,
  }) as ScriptedRedis;
  // Errors surface on the commands that meet them; without a listener ioredis would also print them.
  redis.on('error', () => {});
  redis.defineCommand('hallmarkIncrement', { numberOfKeys: 1, lua: incrementScript });
  redis.defineCommand('hallmarkConsumeQuota', { numberOfKeys: 1, lua: consumeQuotaScript });

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
    async consumeQuota(key, cost, limit, resetAtMs): Promise<QuotaDecision> {
      const [allowed, used] = await redis.hallmarkConsumeQuota(key, cost, limit, resetAtMs);
      return { allowed: allowed === 1, used, limit, remaining: Math.max(0, limit - used), resetAtMs };
    },
    async ping() {
      await redis.ping();
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
