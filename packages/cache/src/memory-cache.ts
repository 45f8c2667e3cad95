import type { Cache, QuotaDecision } from './cache.ts';

interface Entry {
  value: string;
  expiresAtMs: number | undefined;
}

/** The cache in this process's memory, for the embedded form. Expired keys are swept every minute. */
export function createMemoryCache(options: { now?: () => number } = {}): Cache {
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();

  const live = (key: string): Entry | undefined => {
    const entry = entries.get(key);
    if (entry?.expiresAtMs !== undefined && entry.expiresAtMs <= now()) {
      entries.delete(key);
      return undefined;
    }
    return entry;
  };

  const sweeper = setInterval(() => {
    for (const key of entries.keys()) live(key);
  }, 60_000);
  sweeper.unref();

  return {
    async get(key) {
      return live(key)?.value;
    },
    async set(key, value, { ttlMs } = {}) {
      entries.set(key, { value, expiresAtMs: ttlMs === undefined ? undefined : now() + ttlMs });
    },
    async setIfAbsent(key, value, ttlMs) {
      if (live(key)) return false;
      entries.set(key, { value, expiresAtMs: now() + ttlMs });
      return true;
    },
    async delete(key) {
      entries.delete(key);
    },
    async increment(key, by, ttlMs) {
      const entry = live(key);
      const value = Number(entry?.value ?? 0) + by;
      entries.set(key, { value: String(value), expiresAtMs: entry ? entry.expiresAtMs : now() + ttlMs });
      return value;
    },
    async consumeQuota(key, cost, limit, resetAtMs): Promise<QuotaDecision> {
      const entry = live(key);
      const used = Number(entry?.value ?? 0);
      if (used + cost > limit) {
        return { allowed: false, used, limit, remaining: Math.max(0, limit - used), resetAtMs };
      }
      entries.set(key, { value: String(used + cost), expiresAtMs: resetAtMs });
      return { allowed: true, used: used + cost, limit, remaining: limit - used - cost, resetAtMs };
    },
    async ping() {},
    async close() {
      clearInterval(sweeper);
      entries.clear();
    },
  };
}
