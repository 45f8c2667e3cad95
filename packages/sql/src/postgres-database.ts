import pg from 'pg';
import { withTrustedCaFile } from './postgres-url.ts';
import type { SqlDatabase, SqlExecutor } from './sql-database.ts';

export interface PostgresOptions {
  /** A PostgreSQL URL; for TLS `?sslmode=verify-full` (and `sslrootcert=<PEM file>` for a private CA). */
  connectionString: string;
  /**
   * PEM file of the authorities trusted for the server's certificate when the URL asks for TLS and
   * names no `sslrootcert` (HALLMARK_TLS_CA_FILE); it does not turn TLS on (postgres-url.ts).
   */
  tlsCaFile?: string;
  /** Pool size; the default suits one service replica. */
  maxConnections?: number;
  applicationName?: string;
  /**
   * How long a statement sent with `query` or in a `transaction` may wait for its answer (15 s by
   * default; 0: no limit) before its connection is given up; `execScript` (migrations) has no limit.
   */
  statementTimeoutMs?: number;
}

/** A statement's answer waited for longer than this is given up with its connection (a silent server). */
const defaultStatementTimeoutMs = 15_000;
/** What `ping` (readiness) waits for at most: a probe gives up after 3 s. */
const pingTimeoutMs = 2_000;

/** SQLSTATEs and socket codes that mean the connection is gone, not that the statement was refused. */
const connectionErrorCodes = new Set(['57P01', '57P02', '57P03', 'ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT']);
const connectionErrorMessages = /^(Connection terminated|Client has encountered a connection error)/;
/** pg's error for a statement whose answer did not come within its `query_timeout`. */
const statementTimeoutMessage = 'Query read timeout';

/**
 * True when a statement's answer did not come within the statement timeout: the server (or the
 * network to it) is silent, or the statement is far slower than any this code base sends. Whether
 * it ran is unknown, as after a lost connection, and the connection it was sent on is given up.
 */
export function isStatementTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === statementTimeoutMessage;
}

/**
 * True for an error that says the connection to PostgreSQL was lost (a failover, a restart, a
 * terminated backend: 57P01/57P02/57P03, class 08, a reset socket) or given up (a statement
 * timeout, {@link isStatementTimeout}), as opposed to an error of the statement.
 */
export function isConnectionError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (isStatementTimeout(error)) return true;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (connectionErrorCodes.has(code) || code.startsWith('08'))) return true;
  return connectionErrorMessages.test(error.message);
}

/**
 * True when no pooled connection came free within the pool's wait (`connectionTimeoutMillis`: 5 s, or the statement timeout when shorter):
 * every connection is busy, with a saturated or silent server. The request did nothing; the
 * connections are not lost (not {@link isConnectionError}), and a retry a moment later may pass.
 */
export function isPoolWaitTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === 'timeout exceeded when trying to connect';
}

/**
 * A statement that may run twice without harm: a plain SELECT that locks nothing and calls none
 * of the functions with side effects this code base uses. Only these are retried after a lost connection.
 */
const readStatement = /^\s*select\b/i;
const sideEffects =
  /\b(for\s+(no\s+key\s+)?update|for\s+(key\s+)?share|nextval|setval|pg_advisory\w*|pg_notify|pg_terminate_backend|pg_cancel_backend)\b/i;
const isRetryableRead = (text: string) => readStatement.test(text) && !sideEffects.test(text);

/** Largest pause between two attempts of a lost LISTEN connection to come back. */
const maxListenRetryDelayMs = 5_000;

/**
 * SqlDatabase over a PostgreSQL server through a `pg` pool.
 *
 * A lost connection (the server terminated it in a failover or restart) is an error value, never
 * an unhandled 'error' event: every client we hold has an error listener, and a client that erred
 * goes back to the pool with its error, so the pool drops it. After a loss, clients connected
 * before it are not reused (they are likely dead too). A plain read cut off by a lost connection is
 * retried once on a fresh connection; a transaction whose BEGIN failed that way is started once
 * more; anything else rejects with the connection error. LISTEN connections reconnect by themselves.
 */
export function createPostgresDatabase(options: PostgresOptions): SqlDatabase {
  const applicationName = options.applicationName ?? 'hallmark';
  const statementTimeoutMs = options.statementTimeoutMs ?? defaultStatementTimeoutMs;
  /** Sends one statement with the statement timeout (none when 0): a silent server answers with isStatementTimeout. */
  const send = (client: pg.PoolClient, text: string, params?: readonly unknown[], timeoutMs = statementTimeoutMs) =>
    client.query({ text, values: params as unknown[] | undefined, ...(timeoutMs > 0 ? { query_timeout: timeoutMs } : {}) });
  const connectionString = withTrustedCaFile(options.connectionString, options.tlsCaFile);
  const pool = new pg.Pool({
    connectionString,
    max: options.maxConnections ?? 10,
    application_name: applicationName,
    // A statement that cannot even have a connection within its own timeout is as late as one that
    // timed out: with a short statement timeout (300 ms) and a server gone silent, a request waited
    // 5 s for a new connection's handshake, twice, where it should have had its 503 at once.
    connectionTimeoutMillis: statementTimeoutMs > 0 ? Math.min(5_000, statementTimeoutMs) : 5_000,
  });

  // Connections made before the last observed loss are suspect: the server that dropped one
  // (failover, restart) most likely dropped all of them.
  let epoch = 0;
  const bornIn = new WeakMap<object, number>();
  pool.on('connect', (client) => bornIn.set(client, epoch));
  const noteLoss = () => {
    epoch += 1;
  };
  // An idle client that loses its connection emits here (the pool drops it); without a listener it would crash the process.
  pool.on('error', noteLoss);

  interface Lease {
    client: pg.PoolClient;
    /** The connection error the client emitted while we held it, if any. */
    lost(): Error | undefined;
    /** Gives the client back; with a connection error, the pool drops it. */
    release(failure?: unknown): void;
  }

  const lease = (client: pg.PoolClient): Lease => {
    let lost: Error | undefined;
    // A checked-out client has no listener of the pool's: without ours, its connection
    // dying between two statements (idle in a transaction) would be an uncaught exception.
    const onError = (error: Error) => {
      lost ??= error;
    };
    client.on('error', onError);
    return {
      client,
      lost: () => lost,
      release(failure) {
        client.removeListener('error', onError);
        const broken = lost ?? (isConnectionError(failure) ? (failure as Error) : undefined);
        if (broken) noteLoss();
        client.release(broken);
      },
    };
  };

  /** A pooled client connected since the last observed loss. */
  const checkout = async (): Promise<Lease> => {
    for (;;) {
      const client = await pool.connect();
      if ((bornIn.get(client) ?? -1) >= epoch) return lease(client);
      client.release(new Error('connected before the database dropped connections'));
    }
  };

  const runOnce = async <Row>(text: string, params?: readonly unknown[], timeoutMs = statementTimeoutMs): Promise<Row[]> => {
    const held = await checkout();
    let failure: unknown;
    try {
      const result = await send(held.client, text, params, timeoutMs);
      return result.rows as Row[];
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      held.release(failure);
    }
  };

  const executorOf = (client: pg.PoolClient): SqlExecutor => ({
    async query<Row>(text: string, params?: readonly unknown[]) {
      const result = await send(client, text, params);
      return result.rows as Row[];
    },
    async execScript(sql: string) {
      await client.query(sql);
    },
  });

  /** Checks a client out and runs BEGIN on it; once more on a fresh one when the connection was lost. */
  const begin = async (): Promise<Lease> => {
    for (let attempt = 1; ; attempt++) {
      const held = await checkout();
      try {
        await send(held.client, 'BEGIN');
        return held;
      } catch (error) {
        held.release(error);
        if (attempt >= 2 || !isConnectionError(error)) throw error;
        noteLoss();
      }
    }
  };

  const listeners = new Set<() => Promise<void>>();

  return {
    engine: 'postgres',
    async query<Row>(text: string, params?: readonly unknown[]) {
      try {
        return await runOnce<Row>(text, params);
      } catch (error) {
        // A statement that timed out is not sent again: it would wait as long once more.
        if (!isConnectionError(error) || isStatementTimeout(error) || !isRetryableRead(text)) throw error;
        noteLoss();
        return runOnce<Row>(text, params);
      }
    },
    async execScript(sql: string) {
      await runOnce(sql, undefined, 0);
    },
    async transaction(work) {
      const held = await begin();
      let failure: unknown;
      try {
        const result = await work(executorOf(held.client));
        await send(held.client, 'COMMIT');
        return result;
      } catch (error) {
        failure = error;
        const lost = held.lost();
        if (lost || isConnectionError(error)) {
          // The server rolled the transaction back when it dropped the connection. Report the
          // cause (57P01…) rather than pg's later "client is not queryable".
          throw lost && !(error as { code?: unknown })?.code ? lost : error;
        }
        await send(held.client, 'ROLLBACK').catch((rollbackFailure: unknown) => {
          // A ROLLBACK left unanswered: the connection is given up with it (the server rolls back).
          if (isConnectionError(rollbackFailure)) failure = rollbackFailure;
        });
        throw error;
      } finally {
        held.release(failure);
      }
    },
    async listen(channel, onNotify) {
      // LISTEN needs a connection of its own: a pooled one would be handed to other queries.
      let stopped = false;
      let current: pg.Client | undefined;
      let retryTimer: NodeJS.Timeout | undefined;
      let failedAttempts = 0;

      const connect = async (): Promise<void> => {
        const client = new pg.Client({
          connectionString,
          application_name: applicationName,
          connectionTimeoutMillis: 5_000,
        });
        let up = false;
        const lose = () => {
          // While connecting, the failure rejects connect() instead; after stop(), the end is ours.
          if (!up || stopped) return;
          up = false;
          if (current === client) current = undefined;
          noteLoss();
          client.end().catch(() => {});
          if (!stopped) reconnectLater();
        };
        client.on('error', lose);
        client.on('end', lose);
        client.on('notification', (message) => {
          if (message.channel === channel) onNotify(message.payload ?? '');
        });
        try {
          await client.connect();
          await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
        } catch (error) {
          await client.end().catch(() => {});
          throw error;
        }
        if (stopped) {
          await client.end().catch(() => {});
          return;
        }
        up = true;
        current = client;
      };

      const reconnectLater = () => {
        const delay = Math.min(100 * 2 ** failedAttempts, maxListenRetryDelayMs);
        retryTimer = setTimeout(() => {
          retryTimer = undefined;
          connect().then(
            () => {
              failedAttempts = 0;
              // Notifications sent while we were away are lost: tell the listener to look.
              if (!stopped) onNotify('');
            },
            () => {
              failedAttempts += 1;
              if (!stopped) reconnectLater();
            },
          );
        }, delay);
      };

      await connect();
      const stop = async () => {
        stopped = true;
        listeners.delete(stop);
        clearTimeout(retryTimer);
        const client = current;
        current = undefined;
        await client?.end().catch(() => {});
      };
      listeners.add(stop);
      return stop;
    },
    async ping() {
      await runOnce('SELECT 1', undefined, statementTimeoutMs > 0 ? Math.min(statementTimeoutMs, pingTimeoutMs) : pingTimeoutMs);
    },
    async close() {
      await Promise.all([...listeners].map((stop) => stop()));
      await pool.end();
    },
  };
}
