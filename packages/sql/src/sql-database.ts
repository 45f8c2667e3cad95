/** Runs statements. A transaction hands its callback one of these, bound to its connection. */
export interface SqlExecutor {
  /** One statement with `$1…` parameters; resolves with its rows. */
  query<Row = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<Row[]>;
  /** Several `;`-separated statements without parameters (migrations). */
  execScript(sql: string): Promise<void>;
}

/**
 * The PostgreSQL port. Two adapters share it: `pg` against a server (the distributed form)
 * and PGlite in the process (the embedded form). The SQL above it is the same for both.
 */
export interface SqlDatabase extends SqlExecutor {
  readonly engine: 'postgres' | 'pglite';
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it rejects. */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /**
   * LISTEN on a channel; resolves with a function that stops listening. A lost connection is
   * made again by itself (PostgreSQL); as notifications sent meanwhile are lost, `onNotify` is
   * then called once with an empty payload. Rejects when the first LISTEN fails.
   */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
