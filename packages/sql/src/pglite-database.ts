import { mkdir } from 'node:fs/promises';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { createPgliteWorkerDatabase } from './pglite-worker-database.ts';
import type { SqlDatabase, SqlExecutor } from './sql-database.ts';

export interface PgliteOptions {
  /** A CHECKPOINT once this much WAL was written since the last one (default 64 MiB); on-disk databases only. */
  checkpointAfterWalBytes?: number;
  /** How often the WAL written since the last checkpoint is looked at (default 2 s). */
  walCheckIntervalMs?: number;
  /**
   * Where PGlite's WebAssembly runs: on this thread ('main', the default), or in a worker thread
   * ('worker', pglite-worker-database.ts), which keeps its work off this thread's event loop.
   */
  thread?: 'main' | 'worker';
  /**
   * PostgreSQL's buffer cache (`shared_buffers`, e.g. '16MB'). Default: PostgreSQL's 128MB for a
   * database on disk, 16MB for one in memory, whose pages are in memory already. PGlite touches the
   * whole cache as it starts: 128MB took ~0.5 s of CPU more than 16MB at every start (2026-12-07).
   */
  sharedBuffers?: string;
}

/**
 * SqlDatabase over PGlite: PostgreSQL compiled to WebAssembly, in this process.
 * `dataDir` keeps the data on disk; without it the database lives in memory.
 * PGlite has one connection, so its transactions run one at a time.
 *
 * PGlite runs PostgreSQL in single-user mode, which has no checkpointer: nothing checkpoints
 * before close, so its WAL grows without bound (3.9 GB after a million codes, more than the
 * tables) and a crash would replay all of it at the next start. On disk, every `walCheckIntervalMs`
 * a cheap look at the WAL written since the last checkpoint runs a CHECKPOINT once it passes
 * `checkpointAfterWalBytes`, after which PostgreSQL recycles the older segments as it would with
 * its checkpointer (max_wal_size).
 */
export async function createPgliteDatabase(dataDir?: string, options: PgliteOptions = {}): Promise<SqlDatabase> {
  const startParams = startParamsOf(dataDir, options);
  const database =
    options.thread === 'worker'
      ? await createPgliteWorkerDatabase(dataDir, startParams)
      : await createPgliteHere(dataDir, startParams);
  if (!dataDir) return database;
  const checkpoints = checkpointWhenWalGrows(database, options);
  return {
    ...database,
    async close() {
      await checkpoints.stop();
      await database.close();
    },
  };
}

/**
 * PGlite's own start parameters, and how many WAL segments a checkpoint keeps for reuse: at most
 * 64 MB (max_wal_size), instead of up to PostgreSQL's default 1 GB, which a checkpoint every 64 MB
 * of WAL would otherwise fill with recycled segments (2.7 KB a code in bench:batch's data folder).
 */
const pgliteStartParams: readonly string[] = [...PGlite.defaultStartParams, '-c', 'min_wal_size=32MB', '-c', 'max_wal_size=64MB'];

/** PGlite's start parameters for this database (PgliteOptions.sharedBuffers). */
function startParamsOf(dataDir: string | undefined, options: PgliteOptions): string[] {
  const sharedBuffers = options.sharedBuffers ?? (dataDir ? undefined : '16MB');
  return [...pgliteStartParams, ...(sharedBuffers ? ['-c', `shared_buffers=${sharedBuffers}`] : [])];
}

/** PGlite on this thread. */
async function createPgliteHere(dataDir: string | undefined, startParams: string[]): Promise<SqlDatabase> {
  if (dataDir) await mkdir(dataDir, { recursive: true });
  const db = dataDir ? await PGlite.create(dataDir, { startParams }) : await PGlite.create({ startParams });

  const executorOf = (client: PGlite | Transaction): SqlExecutor => ({
    async query<Row>(text: string, params?: readonly unknown[]) {
      const result = await client.query<Row>(text, params as unknown[] | undefined);
      return result.rows;
    },
    async execScript(sql: string) {
      await client.exec(sql);
    },
  });

  return {
    engine: 'pglite',
    ...executorOf(db),
    transaction: (work) => db.transaction((tx) => work(executorOf(tx))),
    async listen(channel, onNotify) {
      const unlisten = await db.listen(channel, onNotify);
      return () => unlisten();
    },
    async ping() {
      await db.query('SELECT 1');
    },
    async close() {
      await db.close();
    },
  };
}

function checkpointWhenWalGrows(db: SqlDatabase, options: PgliteOptions): { stop(): Promise<void> } {
  const limit = options.checkpointAfterWalBytes ?? 64 * 1024 * 1024;
  let running: Promise<void> | undefined;
  const look = async () => {
    try {
      const rows = await db.query<{ bytes: string }>(
        'SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), redo_lsn)::text AS bytes FROM pg_control_checkpoint()',
      );
      if (Number(rows[0]?.bytes ?? 0) > limit) await db.query('CHECKPOINT');
    } catch {
      // A failed look is tried again at the next interval; the database's own errors reach its callers.
    }
  };
  const timer = setInterval(() => {
    running ??= look().finally(() => {
      running = undefined;
    });
  }, options.walCheckIntervalMs ?? 2_000);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
