import { Worker } from 'node:worker_threads';
import type { OneTripOutcome, OneTripStatement, SqlDatabase, SqlExecutor } from './sql-database.ts';

/** A statement's rows as the worker sends them: its json and jsonb columns (`json`) as their text. */
interface WorkerRows {
  rows: Record<string, unknown>[];
  json?: string[];
}

/** What the worker answers to a request (pglite-worker.js). */
interface WorkerAnswer extends Partial<WorkerRows> {
  id: number;
  tx?: number;
  /** A script's outcome, each statement's rows as WorkerRows. */
  outcome?: { committed: true; rows: WorkerRows[] } | Extract<OneTripOutcome, { committed: false }>;
  error?: { message: string; fields: Record<string, unknown> };
}

/** The rows with their json and jsonb columns parsed, as PGlite parses them (the worker leaves them as text). */
function parsedRows<Row>({ rows = [], json }: Partial<WorkerRows>): Row[] {
  if (json) {
    for (const row of rows) {
      for (const column of json) {
        const text = row[column];
        if (typeof text === 'string') row[column] = JSON.parse(text);
      }
    }
  }
  return rows as Row[];
}

type WorkerRequest =
  | { kind: 'query'; text: string; params: readonly unknown[] | undefined; tx: number | undefined }
  | { kind: 'exec'; sql: string; tx: number | undefined }
  | { kind: 'begin' }
  | { kind: 'script'; statements: readonly OneTripStatement[] }
  | { kind: 'end'; tx: number; commit: boolean }
  | { kind: 'listen'; channel: string }
  | { kind: 'unlisten'; channel: string }
  | { kind: 'close' };

/** A PostgreSQL error from the worker, with the fields PGlite's own error has (`code`, `constraint`, `detail`…). */
function errorFrom(answer: NonNullable<WorkerAnswer['error']>): Error {
  return Object.assign(new Error(answer.message), answer.fields);
}

/**
 * SqlDatabase over PGlite running in a worker thread (pglite-worker.js): the WebAssembly's work,
 * which holds whichever thread runs it for as long as a statement takes, leaves this thread's
 * event loop, which only posts statements and receives rows (structured clones: Dates, bigints and
 * Uint8Arrays arrive as PGlite made them; json and jsonb arrive as text and are parsed here, off the
 * worker's thread). A transaction is opened in the worker, receives its statements by number, and is
 * committed or rolled back by a last message; PGlite runs one at a time. Rejects when PGlite cannot
 * start (the worker's error). `startParams`: PGlite's start parameters (pgliteStartParams).
 */
export async function createPgliteWorkerDatabase(
  dataDir: string | undefined,
  startParams: readonly string[],
): Promise<SqlDatabase> {
  const worker = new Worker(new URL('./pglite-worker.js', import.meta.url), {
    workerData: { dataDir, startParams: [...startParams] },
  });
  const pending = new Map<number, { resolve: (answer: WorkerAnswer) => void; reject: (error: Error) => void }>();
  const listeners = new Map<string, { callbacks: Set<(payload: string) => void>; listened: Promise<WorkerAnswer> }>();
  let nextId = 1;
  let stopped: Error | undefined;

  // An idle worker does not keep the process alive (PGlite in the process did not either); one
  // with a statement in flight does, so a script awaiting its last query is not cut short.
  worker.unref();
  const request = (message: WorkerRequest): Promise<WorkerAnswer> => {
    if (stopped) return Promise.reject(stopped);
    const id = nextId++;
    if (pending.size === 0) worker.ref();
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      worker.postMessage({ id, ...message });
    });
  };
  const settle = (id: number) => {
    const waiting = pending.get(id);
    pending.delete(id);
    if (pending.size === 0) worker.unref();
    return waiting;
  };
  const stop = (error: Error) => {
    stopped ??= error;
    for (const id of [...pending.keys()]) settle(id)?.reject(error);
  };

  const ready = new Promise<void>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the PGlite worker exited (code ${code}) before it was ready`)));
    worker.on('message', function started(message: { kind?: string }) {
      if (message.kind !== 'ready') return;
      worker.off('message', started);
      resolve();
    });
  });
  worker.on('message', (message: WorkerAnswer & { kind?: string; channel?: string; payload?: string }) => {
    if (message.kind === 'notify') {
      for (const onNotify of listeners.get(message.channel as string)?.callbacks ?? []) onNotify(message.payload ?? '');
      return;
    }
    if (message.kind === 'ready') return;
    const waiting = settle(message.id);
    if (message.error) waiting?.reject(errorFrom(message.error));
    else waiting?.resolve(message);
  });
  worker.on('error', (error) => stop(error));
  worker.on('exit', (code) => stop(new Error(`the PGlite worker exited (code ${code})`)));
  await ready.catch(async (error: unknown) => {
    await worker.terminate();
    throw error;
  });

  const executorOf = (tx: number | undefined): SqlExecutor => ({
    async query<Row>(text: string, params?: readonly unknown[]) {
      return parsedRows<Row>(await request({ kind: 'query', text, params, tx }));
    },
    async execScript(sql: string) {
      await request({ kind: 'exec', sql, tx });
    },
  });

  return {
    engine: 'pglite',
    ...executorOf(undefined),
    async transaction(work) {
      const { tx } = await request({ kind: 'begin' });
      const executor = executorOf(tx as number);
      let result: Awaited<ReturnType<typeof work>>;
      try {
        result = await work(executor);
      } catch (error) {
        // The work's error is the one its caller needs; a failed ROLLBACK leaves PGlite's own state to PGlite.
        await request({ kind: 'end', tx: tx as number, commit: false }).catch(() => {});
        throw error;
      }
      await request({ kind: 'end', tx: tx as number, commit: true });
      return result;
    },
    async runInOneTrip(statements) {
      const outcome = (await request({ kind: 'script', statements })).outcome as NonNullable<WorkerAnswer['outcome']>;
      return outcome.committed ? { committed: true, rows: outcome.rows.map((each) => parsedRows(each)) } : outcome;
    },
    async listen(channel, onNotify) {
      let entry = listeners.get(channel);
      if (!entry) {
        const created = { callbacks: new Set<(payload: string) => void>(), listened: request({ kind: 'listen', channel }) };
        listeners.set(channel, created);
        created.listened.catch(() => listeners.get(channel) === created && listeners.delete(channel));
        entry = created;
      }
      await entry.listened;
      // Its own function, so the same callback given twice is stopped once per listen.
      const listener = (payload: string) => onNotify(payload);
      const { callbacks } = entry;
      callbacks.add(listener);
      return async () => {
        callbacks.delete(listener);
        if (callbacks.size === 0 && listeners.get(channel) === entry) {
          listeners.delete(channel);
          await request({ kind: 'unlisten', channel }).catch(() => {});
        }
      };
    },
    async ping() {
      await request({ kind: 'query', text: 'SELECT 1', params: undefined, tx: undefined });
    },
    async close() {
      if (stopped) return;
      try {
        await request({ kind: 'close' });
      } finally {
        stop(new Error('the PGlite database is closed'));
        await worker.terminate();
      }
    },
  };
}
