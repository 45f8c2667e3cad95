/** Runs statements. A transaction hands its callback one of these, bound to its connection. */
export interface SqlExecutor {
  /** One statement with `$1…` parameters; resolves with its rows. */
  query<Row = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<Row[]>;
  /** Several `;`-separated statements without parameters (migrations). */
  execScript(sql: string): Promise<void>;
}

/** A statement of {@link SqlDatabase.runInOneTrip}; `expectRows`: the transaction is rolled back when it returns none. */
export interface OneTripStatement {
  text: string;
  params: readonly unknown[];
  expectRows?: boolean;
}

/** What {@link SqlDatabase.runInOneTrip} did: committed with each statement's rows, or rolled back at the first `expectRows` statement that returned none. */
export type OneTripOutcome = { committed: true; rows: unknown[][] } | { committed: false; emptyAt: number };

/**
 * The PostgreSQL port. Two adapters share it: `pg` against a server (the distributed form)
 * and PGlite in the process (the embedded form). The SQL above it is the same for both.
 */
export interface SqlDatabase extends SqlExecutor {
  readonly engine: 'postgres' | 'pglite';
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it rejects. */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /**
   * Runs statements in one transaction, in one round trip, where that saves holding the database:
   * PGlite in its worker thread, whose one connection a transaction otherwise holds while the
   * event loop, busy with requests, gets round to sending each next statement. Absent elsewhere
   * (use `transaction`). A failed statement rolls back and rejects, as in `transaction`. PGlite runs
   * a trip after the statements and transactions waiting for it (up to 8 of them in a row while the
   * trip waits): trips carry bulk work, a batch's chunks and the projections' pages, that requests
   * should not queue behind.
   */
  runInOneTrip?(statements: readonly OneTripStatement[]): Promise<OneTripOutcome>;
  /**
   * LISTEN on a channel; resolves with a function that stops listening. A lost connection is
   * made again by itself (PostgreSQL); as notifications sent meanwhile are lost, `onNotify` is
   * then called once with an empty payload. Rejects when the first LISTEN fails.
   */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
