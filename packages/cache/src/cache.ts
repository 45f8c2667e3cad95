export interface QuotaCounter {
  key: string;
  cost: number;
  limit: number;
  /** When this counter's window ends, in Unix milliseconds; the counter expires then. */
  resetAtMs: number;
}

export interface CounterState {
  key: string;
  /** Units used in the window after this call (unchanged when refused). */
  used: number;
  limit: number;
  remaining: number;
  resetAtMs: number;
}

export interface QuotaDecision {
  /** True when every counter had room and all were spent; false when none was. */
  allowed: boolean;
  /** Index of the first counter without room, when refused. */
  refusedIndex: number | undefined;
  counters: CounterState[];
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
   * Spends on several fixed-window counters at once, all or nothing: when any counter would pass
   * its limit, nothing is spent on any of them. One round trip.
   */
  consumeQuotas(counters: readonly QuotaCounter[]): Promise<QuotaDecision>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
