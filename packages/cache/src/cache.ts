export interface QuotaDecision {
  allowed: boolean;
  /** Units used in the window after this call (unchanged when refused). */
  used: number;
  limit: number;
  remaining: number;
  /** When the window ends, in Unix milliseconds. */
  resetAtMs: number;
}

/**
 * Cache and counters. Every operation is atomic on its own: in Redis through one Lua script each,
 * in memory because the process has one thread. Keys are relative: the adapter adds its prefix.
 */
export interface Cache {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string, options?: { ttlMs?: number }): Promise<void>;
  /** Sets only if absent; true when this call set it. For idempotency keys and de-duplication. */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;
  delete(key: string): Promise<void>;
  /** Adds `by` and returns the new value; a new key expires after `ttlMs`. */
  increment(key: string, by: number, ttlMs: number): Promise<number>;
  /**
   * Spends `cost` units of a fixed window of `windowMs` ending at `resetAtMs`, all or nothing:
   * refused (and nothing spent) when it would pass `limit`.
   */
  consumeQuota(key: string, cost: number, limit: number, resetAtMs: number): Promise<QuotaDecision>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
