import { Redis } from 'ioredis';
import type { Cache, QuotaDecision } from './cache.ts';

// INCRBY, and PEXPIRE when this call created the key. Returns the new value.
const incrementScript = `
local value = redis.call('INCRBY', KEYS[1], ARGV[1])
if value == tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return value`;

// For counter i (KEYS[i]) ARGV holds cost, limit and expiry (Unix ms) at 3i-2, 3i-1, 3i.
// Spends on all when every one has room, else on none. Returns {refused index or 0, used…}.
const consumeQuotasScript = `
local used = {}
for i, key in ipairs(KEYS) do
  used[i] = tonumber(redis.call('GET', key) or '0')
  if used[i] + tonumber(ARGV[3 * i - 2]) > tonumber(ARGV[3 * i - 1]) then
    local result = {i}
    for j = 1, #KEYS do result[j + 1] = tonumber(redis.call('GET', KEYS[j]) or '0') end
    return result
  end
end
local result = {0}
for i, key in ipairs(KEYS) do
  result[i + 1] = redis.call('INCRBY', key, ARGV[3 * i - 2])
  redis.call('PEXPIREAT', key, ARGV[3 * i])
end
return result`;

type ScriptedRedis = Redis & {
  hallmarkIncrement(key: string, by: number, ttlMs: number): Promise<number>;
  hallmarkConsumeQuotas(numberOfKeys: number, ...keysThenArgs: Array<string | number>): Promise<number[]>;
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
  redis.defineCommand('hallmarkConsumeQuotas', { lua: consumeQuotasScript });

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
    async consumeQuotas(counters): Promise<QuotaDecision> {
      const args = counters.flatMap((counter) => [counter.cost, counter.limit, counter.resetAtMs]);
      const [refused, ...used] = await redis.hallmarkConsumeQuotas(
        counters.length,
        ...counters.map((counter) => counter.key),
        ...args,
      );
      const allowed = refused === 0;
      return {
        allowed,
        refusedIndex: allowed ? undefined : (refused ?? 1) - 1,
        counters: counters.map((counter, index) => {
          const spent = used[index] ?? 0;
          return {
            key: counter.key,
            used: spent,
            limit: counter.limit,
            remaining: Math.max(0, counter.limit - spent),
            resetAtMs: counter.resetAtMs,
          };
        }),
      };
    },
    async ping() {
      await redis.ping();
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
