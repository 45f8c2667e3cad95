import type { Cache, CounterState, QuotaDecision } from './cache.ts';

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
    async consumeQuotas(counters): Promise<QuotaDecision> {
      const used = counters.map((counter) => Number(live(counter.key)?.value ?? 0));
      const refusedIndex = counters.findIndex((counter, index) => (used[index] ?? 0) + counter.cost > counter.limit);
      const allowed = refusedIndex === -1;
      const states: CounterState[] = counters.map((counter, index) => {
        const after = (used[index] ?? 0) + (allowed ? counter.cost : 0);
        if (allowed) entries.set(counter.key, { value: String(after), expiresAtMs: counter.resetAtMs });
        return {
          key: counter.key,
          used: after,
          limit: counter.limit,
          remaining: Math.max(0, counter.limit - after),
          resetAtMs: counter.resetAtMs,
        };
      });
      return { allowed, refusedIndex: allowed ? undefined : refusedIndex, counters: states };
    },
    async ping() {},
    async close() {
      clearInterval(sweeper);
      entries.clear();
    },
  };
}
