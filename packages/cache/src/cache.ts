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

/** A counter's state once `used` units of its window are spent. */
export function counterState(counter: QuotaCounter, used: number): CounterState {
  return {
    key: counter.key,
    used,
    limit: counter.limit,
    remaining: Math.max(0, counter.limit - used),
    resetAtMs: counter.resetAtMs,
  };
}

export interface ScanInput {
  /** What was scanned, e.g. `live:09506000134352:SN-1`. */
  subject: string;
  atMs: number;
  /** Who scanned; the same client again within `repeatWindowMs` counts once toward the window. */
  client: string;
  repeatWindowMs: number;
  /** The window for counting scans (EXCESSIVE_SCANS). */
  windowMs: number;
  /** The window for counting distinct clients (a cloned label is scanned by many at once). */
  clientWindowMs: number;
  /**
   * Where the scan was, as `reportedBy` (the verifying account) says: `previousLocation` is the
   * previous location the same party reported, so no one's claims are judged against another's
   * (a location is whatever the caller typed in).
   */
  location?: { latitude: number; longitude: number; reportedBy: string } | undefined;
  /** How long an item's history is kept after its last scan. */
  retentionMs: number;
}

export interface ScanRecord {
  /** Every scan of the subject, this one included. */
  total: number;
  firstSeenMs: number;
  /** This scan's time. */
  lastSeenMs: number;
  /** The same client scanned within the repeat window. */
  repeat: boolean;
  /**
   * Scans in the sliding window, a client's repeats counted once, this one included. A sliding
   * estimate from two fixed windows (the current count plus the previous one weighted by how much
   * of it the sliding window still covers): constant memory however often a code is scanned.
   */
  scansInWindow: number;
  /** Distinct clients in the client window, this one included. */
  clientsInWindow: number;
  /** The previous scan with a location from the same `reportedBy` as this scan's. */
  previousLocation: { latitude: number; longitude: number; atMs: number } | undefined;
  /** Someone reported the subject as counterfeit. */
  reported: boolean;
}

export interface QuotaRefund {
  key: string;
  cost: number;
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
   * its limit, nothing is spent on any of them. A counter of cost 0 is only read: with limit 0 it
   * refuses once anything was spent on it (a marker, such as a key stopped on another replica). One round trip. The memory adapter answers at once,
   * without a promise: on the per-request path a promise's continuation costs more than the spending.
   */
  consumeQuotas(counters: readonly QuotaCounter[]): QuotaDecision | Promise<QuotaDecision>;
  /**
   * Gives back what was spent on counters for work that was then refused (quota is spent only for
   * accepted work): never below zero, never making a counter that is gone, its window unchanged.
   */
  refundQuotas(refunds: readonly QuotaRefund[]): Promise<void>;
  /** Records one scan and answers the subject's history and risk counters. One round trip. */
  recordScan(scan: ScanInput): Promise<ScanRecord>;
  /** Marks a subject as reported counterfeit; later scans answer `reported: true`. */
  markReported(subject: string, retentionMs: number): Promise<void>;
  /**
   * Resolves once every change made so far outlives this process: at once where the state lives in
   * another process (Redis) or nowhere lasting (memory); after its write where it is journaled into
   * the database (the embedded form, every 100 ms otherwise). For a record elsewhere that must not
   * outlast what it refers to (a keyed request's prepaid quota, noted right after its spend).
   */
  persist(): Promise<void>;
  /**
   * How long, in ms, the oldest change that would not outlive this process has waited for its write:
   * 0 where the state lives elsewhere or nowhere lasting; the embedded form's journal falls behind
   * while its database is busy (a large batch), and a crash loses what it had not written.
   */
  unsavedForMs(): number;
  ping(): Promise<void>;
  close(): Promise<void>;
}
