import type { OneTripStatement, SqlDatabase, SqlExecutor } from '@hallmark/sql';
import type { CheckpointStore, StoredEvent } from './event-store.ts';

/**
 * The advisory lock (its key, for `pg_advisory_xact_lock(hashtextextended(key, 0))`) that a
 * projection's writes hold: one writer at a time, a rebuild's swap included.
 */
export const projectionLockKey = (name: string) => `hallmark:projection:${name}`;

/** A batch refused because another replica moved the projection's checkpoint meanwhile. */
export class ProjectionMovedOn extends Error {
  override name = 'ProjectionMovedOn';
}

/**
 * A projection into SQL as a subscription handler, exactly once: its rows and its checkpoint commit
 * in one transaction. Every replica may run it: a transaction-scoped advisory lock lets one write
 * at a time, and a batch whose starting checkpoint has moved (another replica wrote it) is refused
 * with ProjectionMovedOn, after which the subscription goes on from the stored checkpoint.
 * `checkpointTable` has columns `name` (primary key) and `cursor`.
 */
export function createSqlProjection(options: {
  db: SqlDatabase;
  name: string;
  checkpointTable: string;
  project: (sql: SqlExecutor, events: StoredEvent[]) => Promise<unknown>;
  /**
   * `project` only writes: it reads nothing back from its statements' answers (each is answered with
   * no rows). Its statements are then collected and sent with the lock and the checkpoint in one
   * round trip where the database can (`runInOneTrip`: PGlite in its worker thread), so the
   * transaction holds the database for their work only. A function decides it page by page: a
   * projection that reads only for some pages (the Merkle trees read a tree's frontier, which a new
   * asset has not) says which pages it can write without reading.
   */
  writeOnly?: boolean | ((events: readonly StoredEvent[]) => boolean);
  /**
   * A batch with no events (a typed subscription's page of other events) has only its checkpoint to
   * write: it is written when this long (ms) has passed since the last write, and otherwise left for
   * a later batch, whose checkpoint is further on anyway. A restart then reads again at most this
   * span of events that it does not project. Default 5,000; 0 writes every batch.
   */
  idleCheckpointMs?: number;
  /** Called after each batch with events has committed. */
  onProjected?: () => void;
}) {
  const { db, name, checkpointTable } = options;
  const idleCheckpointMs = options.idleCheckpointMs ?? 5_000;
  let expected: string | undefined;
  /** When the checkpoint was last written (or loaded), by performance.now(). */
  let writtenAt = Number.NEGATIVE_INFINITY;
  const checkpoints: CheckpointStore = {
    async load() {
      const rows = await db.query<{ cursor: string }>(`SELECT cursor FROM ${checkpointTable} WHERE name = $1`, [name]);
      expected = rows[0]?.cursor;
      writtenAt = performance.now();
      return expected;
    },
    // Saved with the rows, in `handle`.
    async save() {},
  };
  return {
    name,
    checkpoints,
    async handle(events: StoredEvent[], cursor: string): Promise<void> {
      // Nothing to project: the subscription moves on in memory, the stored checkpoint later. A
      // replica that moved it meanwhile is found out by the next write's check, as always.
      if (events.length === 0 && expected !== undefined && performance.now() - writtenAt < idleCheckpointMs) return;
      // Rows and checkpoint commit together and replay harmlessly: a commit lost in a crash is
      // projected again from the older checkpoint, so it need not wait for the WAL flush.
      // (SET LOCAL as set_config, in the lock's statement, and the checkpoint checked where it is
      // written: two round trips fewer while the transaction holds a connection, in PGlite the only one.)
      const lock: OneTripStatement = {
        text: `SELECT set_config('synchronous_commit', 'off', true), pg_advisory_xact_lock(hashtextextended($1, 0))`,
        params: [projectionLockKey(name)],
      };
      // Checked (and moved) first, under the lock, before any row: a batch another replica projected
      // already is refused before its rows could meet that replica's (a Merkle leaf's key, say).
      const checkpoint: OneTripStatement =
        expected === undefined
          ? {
              text: `INSERT INTO ${checkpointTable} (name, cursor) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING RETURNING 1`,
              params: [name, cursor],
            }
          : {
              text: `UPDATE ${checkpointTable} SET cursor = $2 WHERE name = $1 AND cursor = $3 RETURNING 1`,
              params: [name, cursor, expected],
            };
      const movedOn = () => new ProjectionMovedOn(`Projection ${name} moved on elsewhere; continuing from its checkpoint`);
      const writeOnly = typeof options.writeOnly === 'function' ? options.writeOnly(events) : options.writeOnly;
      if (writeOnly && db.runInOneTrip) {
        const statements: OneTripStatement[] = [lock, { ...checkpoint, expectRows: true }];
        const collect: SqlExecutor = {
          async query<Row>(text: string, params: readonly unknown[] = []) {
            statements.push({ text, params });
            return [] as Row[];
          },
          async execScript() {
            throw new Error(`projection ${name} is write-only: it runs its statements with query`);
          },
        };
        await options.project(collect, events);
        const outcome = await db.runInOneTrip(statements);
        if (!outcome.committed) throw movedOn();
      } else {
        await db.transaction(async (tx) => {
          await tx.query(lock.text, lock.params);
          if ((await tx.query(checkpoint.text, checkpoint.params)).length === 0) throw movedOn();
          await options.project(tx, events);
        });
      }
      expected = cursor;
      writtenAt = performance.now();
      if (events.length > 0) options.onProjected?.();
    },
  };
}
export type SqlProjection = ReturnType<typeof createSqlProjection>;
