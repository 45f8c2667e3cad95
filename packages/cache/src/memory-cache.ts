import { type Cache, type CounterState, counterState, type QuotaDecision, type ScanRecord } from './cache.ts';

interface ScanHistory {
  total: number;
  firstSeenMs: number;
  lastSeenMs: number;
  /** Fixed windows for the sliding estimate: the current window's index and count, and the previous count. */
  windowIndex: number;
  currentCount: number;
  previousCount: number;
  /** Client → last scan time. */
  clients: Map<string, number>;
  /** Who reported a location (ScanInput.location.reportedBy) → the last location it reported. */
  locations: Map<string, { latitude: number; longitude: number; atMs: number }>;
  reported: boolean;
  expiresAtMs: number;
}

interface Entry {
  value: string;
  expiresAtMs: number | undefined;
}

/** The three kinds of state the memory cache holds: string entries, quota counters, scan histories. */
export type CacheStateKind = 'entry' | 'quota' | 'scan';

/** One key's state as JSON-safe data, to write elsewhere and put back later (journaled-cache.ts). */
export interface CacheStateRecord {
  kind: CacheStateKind;
  key: string;
  state: unknown;
  /** When the state expires (Unix ms, by the cache's clock); null for never. */
  expiresAtMs: number | null;
}

export interface MemoryCacheOptions {
  now?: () => number;
  /**
   * Told the kind and key of every state a call changed, after the change (not of expiries).
   * Called on the per-request path: it must only note the key.
   */
  onChange?: (kind: CacheStateKind, key: string) => void;
}

/** The memory cache, with its state readable and restorable key by key. */
export interface MemoryCache extends Cache {
  /** The live state of one key, or undefined when it is absent or expired. */
  exportState(kind: CacheStateKind, key: string): CacheStateRecord | undefined;
  /** Puts back a state `exportState` gave; for a start, before the cache serves calls. Not reported to `onChange`. */
  importState(record: CacheStateRecord): void;
}

/** The cache in this process's memory, for the embedded form. Expired keys are swept every minute. */
export function createMemoryCache(options: MemoryCacheOptions = {}): MemoryCache {
  const now = options.now ?? Date.now;
  const changed = options.onChange;
  const entries = new Map<string, Entry>();

  const live = (key: string): Entry | undefined => {
    const entry = entries.get(key);
    if (entry?.expiresAtMs !== undefined && entry.expiresAtMs <= now()) {
      entries.delete(key);
      return undefined;
    }
    return entry;
  };

  /** Quota counters (consumeQuotas), apart from the string entries: they change on every request. */
  const quotas = new Map<string, { used: number; resetAtMs: number }>();

  const histories = new Map<string, ScanHistory>();
  const history = (subject: string, atMs: number): ScanHistory => {
    const existing = histories.get(subject);
    if (existing && existing.expiresAtMs > atMs) return existing;
    const fresh: ScanHistory = {
      total: 0,
      firstSeenMs: atMs,
      lastSeenMs: atMs,
      windowIndex: -1,
      currentCount: 0,
      previousCount: 0,
      clients: new Map(),
      locations: new Map(),
      reported: false,
      expiresAtMs: atMs,
    };
    histories.set(subject, fresh);
    return fresh;
  };

  const sweeper = setInterval(() => {
    for (const key of entries.keys()) live(key);
    const nowMs = now();
    for (const [subject, entry] of histories) if (entry.expiresAtMs <= nowMs) histories.delete(subject);
    for (const [key, quota] of quotas) if (quota.resetAtMs <= nowMs) quotas.delete(key);
  }, 60_000);
  sweeper.unref();

  return {
    async get(key) {
      return live(key)?.value;
    },
    async set(key, value, { ttlMs } = {}) {
      entries.set(key, { value, expiresAtMs: ttlMs === undefined ? undefined : now() + ttlMs });
      changed?.('entry', key);
    },
    async setIfAbsent(key, value, ttlMs) {
      if (live(key)) return false;
      entries.set(key, { value, expiresAtMs: now() + ttlMs });
      changed?.('entry', key);
      return true;
    },
    async delete(key) {
      entries.delete(key);
      changed?.('entry', key);
    },
    async increment(key, by, ttlMs) {
      const entry = live(key);
      const value = Number(entry?.value ?? 0) + by;
      entries.set(key, { value: String(value), expiresAtMs: entry ? entry.expiresAtMs : now() + ttlMs });
      changed?.('entry', key);
      return value;
    },
    consumeQuotas(counters): QuotaDecision {
      // The per-request path of the embedded form: numbers mutated in place, no parsing, no new entries once warm.
      const nowMs = now();
      const current = counters.map((counter) => {
        const quota = quotas.get(counter.key);
        return quota && quota.resetAtMs > nowMs ? quota : undefined;
      });
      const refusedIndex = counters.findIndex((counter, index) => (current[index]?.used ?? 0) + counter.cost > counter.limit);
      const allowed = refusedIndex === -1;
      const states: CounterState[] = counters.map((counter, index) => {
        let quota = current[index];
        // A counter spent with cost 0 is read, not written: no entry made, nothing to journal.
        if (allowed && counter.cost > 0) {
          if (quota) quota.used += counter.cost;
          else {
            quota = { used: counter.cost, resetAtMs: counter.resetAtMs };
            quotas.set(counter.key, quota);
          }
          changed?.('quota', counter.key);
        }
        return counterState(counter, quota?.used ?? 0);
      });
      return { allowed, refusedIndex: allowed ? undefined : refusedIndex, counters: states };
    },
    async refundQuotas(refunds) {
      const nowMs = now();
      for (const refund of refunds) {
        const quota = quotas.get(refund.key);
        if (!quota || quota.resetAtMs <= nowMs || quota.used === 0) continue;
        quota.used = Math.max(0, quota.used - refund.cost);
        changed?.('quota', refund.key);
      }
    },
    async recordScan(scan): Promise<ScanRecord> {
      const entry = history(scan.subject, scan.atMs);
      entry.total += 1;
      if (entry.total === 1) entry.firstSeenMs = scan.atMs;
      entry.lastSeenMs = scan.atMs;
      // A repeat window of 0 (repeatWindowSeconds: 0) counts every scan, as in Redis.
      const repeat = scan.repeatWindowMs > 0 && live(`scan-repeat:${scan.subject}:${scan.client}`) !== undefined;
      if (!repeat && scan.repeatWindowMs > 0) {
        entries.set(`scan-repeat:${scan.subject}:${scan.client}`, { value: '1', expiresAtMs: scan.atMs + scan.repeatWindowMs });
        changed?.('entry', `scan-repeat:${scan.subject}:${scan.client}`);
      }
      const windowIndex = Math.floor(scan.atMs / scan.windowMs);
      if (windowIndex === entry.windowIndex + 1) {
        entry.previousCount = entry.currentCount;
        entry.currentCount = 0;
      } else if (windowIndex > entry.windowIndex + 1) {
        entry.previousCount = 0;
        entry.currentCount = 0;
      }
      entry.windowIndex = Math.max(entry.windowIndex, windowIndex);
      if (!repeat) entry.currentCount += 1;
      const previousWeight = 1 - (scan.atMs % scan.windowMs) / scan.windowMs;
      entry.clients.set(scan.client, scan.atMs);
      for (const [client, atMs] of entry.clients) if (atMs <= scan.atMs - scan.clientWindowMs) entry.clients.delete(client);
      const previousLocation = scan.location ? entry.locations.get(scan.location.reportedBy) : undefined;
      if (scan.location) {
        const { latitude, longitude, reportedBy } = scan.location;
        entry.locations.set(reportedBy, { latitude, longitude, atMs: scan.atMs });
      }
      entry.expiresAtMs = scan.atMs + scan.retentionMs;
      changed?.('scan', scan.subject);
      return {
        total: entry.total,
        firstSeenMs: entry.firstSeenMs,
        lastSeenMs: entry.lastSeenMs,
        repeat,
        scansInWindow: Math.floor(entry.currentCount + entry.previousCount * previousWeight),
        clientsInWindow: entry.clients.size,
        previousLocation: previousLocation ? { ...previousLocation } : undefined,
        reported: entry.reported,
      };
    },
    async markReported(subject, retentionMs) {
      const nowMs = now();
      const entry = history(subject, nowMs);
      entry.reported = true;
      entry.expiresAtMs = Math.max(entry.expiresAtMs, nowMs + retentionMs);
      changed?.('scan', subject);
    },
    exportState(kind, key) {
      const nowMs = now();
      switch (kind) {
        case 'entry': {
          const entry = live(key);
          return entry ? { kind, key, state: entry.value, expiresAtMs: entry.expiresAtMs ?? null } : undefined;
        }
        case 'quota': {
          const quota = quotas.get(key);
          return quota && quota.resetAtMs > nowMs ? { kind, key, state: quota.used, expiresAtMs: quota.resetAtMs } : undefined;
        }
        case 'scan': {
          const entry = histories.get(key);
          if (!entry || entry.expiresAtMs <= nowMs) return undefined;
          const state = { ...entry, clients: [...entry.clients], locations: [...entry.locations] };
          return { kind, key, state, expiresAtMs: entry.expiresAtMs };
        }
        default:
          return kind satisfies never;
      }
    },
    importState(record) {
      switch (record.kind) {
        case 'entry':
          entries.set(record.key, { value: String(record.state), expiresAtMs: record.expiresAtMs ?? undefined });
          return;
        case 'quota':
          quotas.set(record.key, { used: Number(record.state), resetAtMs: record.expiresAtMs ?? Number.POSITIVE_INFINITY });
          return;
        case 'scan': {
          // A record journaled before locations were kept per reporter has none: its one location is dropped.
          const state = record.state as Omit<ScanHistory, 'clients' | 'locations'> & {
            clients: [string, number][];
            locations?: [string, { latitude: number; longitude: number; atMs: number }][];
          };
          histories.set(record.key, { ...state, clients: new Map(state.clients), locations: new Map(state.locations ?? []) });
          return;
        }
        default:
          record.kind satisfies never;
      }
    },
    async persist() {},
    unsavedForMs: () => 0,
    async ping() {},
    async close() {
      clearInterval(sweeper);
      entries.clear();
    },
  };
}
