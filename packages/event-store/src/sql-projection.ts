import type { SqlDatabase, SqlExecutor } from '@hallmark/sql';
import type { CheckpointStore, StoredEvent } from './event-store.ts';

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
  /** Called after each batch has committed. */
  onProjected?: () => void;
}) {
  const { db, name, checkpointTable } = options;
  let expected: string | undefined;
  const readCheckpoint = async (sql: SqlExecutor, lock: boolean) => {
    const rows = await sql.query<{ cursor: string }>(
      `SELECT cursor FROM ${checkpointTable} WHERE name = $1${lock ? ' FOR UPDATE' : ''}`,
      [name],
    );
    return rows[0]?.cursor;
  };
  const checkpoints: CheckpointStore = {
    async load() {
      expected = await readCheckpoint(db, false);
      return expected;
    },
    // Saved with the rows, in `handle`.
    async save() {},
  };
  return {
    name,
    checkpoints,
    async handle(events: StoredEvent[], cursor: string): Promise<void> {
      await db.transaction(async (tx) => {
        // Rows and checkpoint commit together and replay harmlessly: a commit lost in a crash is
        // projected again from the older checkpoint, so it need not wait for the WAL flush.
        await tx.query('SET LOCAL synchronous_commit = off');
        await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`hallmark:projection:${name}`]);
        if ((await readCheckpoint(tx, true)) !== expected) {
          throw new ProjectionMovedOn(`Projection ${name} moved on elsewhere; continuing from its checkpoint`);
        }
        await options.project(tx, events);
        await tx.query(
          `INSERT INTO ${checkpointTable} (name, cursor) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET cursor = EXCLUDED.cursor`,
          [name, cursor],
        );
      });
      expected = cursor;
      options.onProjected?.();
    },
  };
}
export type SqlProjection = ReturnType<typeof createSqlProjection>;
