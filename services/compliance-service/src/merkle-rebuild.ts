import { randomBytes } from 'node:crypto';
import { type EventStore, projectionLockKey } from '@hallmark/event-store';
import { type Hash, referenceRoot } from '@hallmark/merkle';
import type { SqlDatabase, SqlExecutor } from '@hallmark/sql';
import { merkleProjectionName, projectEvents } from './merkle-projection.ts';

/**
 * Where a run replays, beside the log it may replace: a schema of its own (two runs never share one),
 * named with this prefix and a random part, its comment the time the run began.
 */
const rebuildSchemaPrefix = 'hallmark_merkle_rebuild_';
/** A schema of a run that began this long ago was left by a run that died: the next run drops it. */
const abandonedAfterMs = 24 * 60 * 60 * 1000;
const projectionTables = ['merkle_nodes', 'provenance_events', 'provenance_assets'] as const;
const pageSize = 1_000;

/** An asset whose recorded log the events no longer give: the evidence a rebuild would erase. */
export interface LogDifference {
  assetId: string;
  /** Leaves the log recorded. */
  loggedSize: number;
  /** Leaves the events give now (0: the asset has no events, or none its log's owner's). */
  rebuiltSize: number;
  reason: 'EVENTS_MISSING' | 'OWNER_CHANGED' | 'EVENTS_CHANGED';
}

export type RebuildOutcome =
  | { outcome: 'rebuilt'; events: number; differences: LogDifference[] }
  | { outcome: 'differs'; events: number; differences: LogDifference[] }
  /** The log changed while the run replayed (a running compliance-service, another rebuild): nothing replaced. */
  | { outcome: 'moved'; events: number };

const quoted = (identifier: string) => `"${identifier.replaceAll('"', '""')}"`;

/**
 * Replays every event into a Merkle log built apart (a schema of this run's own), compares it with
 * the log the product holds, and replaces that log only if every tree it recorded is the same or a
 * prefix of the rebuilt one (the projection had not caught up). A log that recorded events the
 * store no longer gives (deleted, rewritten, moved to another owner) is what
 * GET /compliance/{assetId}/verify reports as LOG_MISMATCH: replacing it would erase that evidence,
 * so the log is left as it was and the differences come back, unless `acceptDifferences` (the
 * operator knows why, e.g. the event store was restored from a backup older than the log).
 * The comparison and the replacement happen under the projection's lock, and only if its checkpoint
 * is where it was when the run began: a log that moved meanwhile (a compliance-service still
 * running, another rebuild that finished first) is neither compared with a replay that has not
 * seen its newest events nor replaced ('moved'). A run that dies part-way leaves the log untouched.
 */
export async function rebuildMerkleProjection(
  db: SqlDatabase,
  eventStore: EventStore,
  options: { acceptDifferences?: boolean; name?: string } = {},
): Promise<RebuildOutcome> {
  const name = options.name ?? merkleProjectionName;
  const [{ schema } = { schema: 'public' }] = await db.query<{ schema: string }>('SELECT current_schema() AS schema');
  const product = quoted(schema);
  const productTables = projectionTables.map((table) => `${product}.${table}`).join(', ');
  const apart = `${rebuildSchemaPrefix}${randomBytes(6).toString('hex')}`;
  await dropAbandonedRuns(db);
  const checkpointAtStart = await readCheckpoint(db, product, name);
  await db.transaction(async (tx) => {
    await tx.query(`CREATE SCHEMA ${apart}`);
    await tx.query(`COMMENT ON SCHEMA ${apart} IS '${new Date().toISOString()}'`);
    for (const table of projectionTables) {
      await tx.query(`CREATE TABLE ${apart}.${table} (LIKE ${product}.${table} INCLUDING ALL)`);
    }
  });
  try {
    let cursor: string | undefined;
    let events = 0;
    for (;;) {
      const page = await eventStore.readAll(cursor === undefined ? { limit: pageSize } : { after: cursor, limit: pageSize });
      if (page.events.length === 0) break;
      await db.transaction(async (tx) => {
        // The projection's statements name its tables unqualified: here they are the run's own.
        await tx.query(`SELECT set_config('search_path', $1, true)`, [apart]);
        await projectEvents(tx, page.events);
      });
      events += page.events.length;
      cursor = page.cursor;
    }
    const outcome = await db.transaction(async (tx): Promise<RebuildOutcome> => {
      await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [projectionLockKey(name)]);
      if ((await readCheckpoint(tx, product, name)) !== checkpointAtStart) return { outcome: 'moved', events };
      const differences = await compareLogs(tx, product, apart);
      if (differences.length > 0 && !options.acceptDifferences) return { outcome: 'differs', events, differences };
      await tx.query(`TRUNCATE ${productTables}`);
      for (const table of projectionTables) {
        await tx.query(`INSERT INTO ${product}.${table} SELECT * FROM ${apart}.${table}`);
      }
      await tx.query(`DELETE FROM ${product}.projection_checkpoints WHERE name = $1`, [name]);
      if (cursor !== undefined) {
        await tx.query(`INSERT INTO ${product}.projection_checkpoints (name, cursor) VALUES ($1, $2)`, [name, cursor]);
      }
      return { outcome: 'rebuilt', events, differences };
    });
    // Fresh statistics, so the planner probes the primary key instead of scanning a tree it thinks small.
    if (outcome.outcome === 'rebuilt') await db.query(`ANALYZE ${productTables}`);
    return outcome;
  } finally {
    await db.query(`DROP SCHEMA IF EXISTS ${apart} CASCADE`);
  }
}

async function readCheckpoint(sql: SqlExecutor, product: string, name: string): Promise<string | null> {
  const [row] = await sql.query<{ cursor: string }>(`SELECT cursor FROM ${product}.projection_checkpoints WHERE name = $1`, [
    name,
  ]);
  return row?.cursor ?? null;
}

/** Drops the schemas of runs that began more than a day ago (a run killed part-way leaves its own). */
async function dropAbandonedRuns(db: SqlDatabase): Promise<void> {
  const runs = await db.query<{ name: string; began: string | null }>(
    `SELECT nspname AS name, obj_description(oid, 'pg_namespace') AS began FROM pg_namespace WHERE starts_with(nspname, $1)`,
    [rebuildSchemaPrefix],
  );
  for (const run of runs) {
    const began = Date.parse(run.began ?? '');
    if (!/^[a-z0-9_]+$/.test(run.name) || !(Date.now() - began > abandonedAfterMs)) continue;
    await db.query(`DROP SCHEMA IF EXISTS ${run.name} CASCADE`);
  }
}

/**
 * Every asset of the product's log whose recorded tree the rebuilt one does not reproduce: missing,
 * another owner, fewer leaves, or another root at the recorded size. An asset the log has not
 * recorded yet, or recorded fewer leaves of, is no difference if those leaves are the same.
 */
async function compareLogs(sql: SqlExecutor, product: string, apart: string): Promise<LogDifference[]> {
  const rows = await sql.query<{
    asset_id: string;
    logged_size: string | number;
    logged_root: Uint8Array;
    rebuilt_size: string | number | null;
    same_owner: boolean | null;
  }>(
    `SELECT p.asset_id, p.tree_size AS logged_size, p.root_hash AS logged_root, r.tree_size AS rebuilt_size,
       (p.account_id = r.account_id AND p.environment = r.environment) AS same_owner
     FROM ${product}.provenance_assets p LEFT JOIN ${apart}.provenance_assets r ON r.asset_id = p.asset_id
     WHERE r.asset_id IS NULL OR r.account_id <> p.account_id OR r.environment <> p.environment
       OR r.tree_size <> p.tree_size OR r.root_hash <> p.root_hash
     ORDER BY p.asset_id`,
  );
  const differences: LogDifference[] = [];
  for (const row of rows) {
    const loggedSize = Number(row.logged_size);
    const rebuiltSize = Number(row.rebuilt_size ?? 0);
    const difference = (reason: LogDifference['reason']) =>
      differences.push({ assetId: row.asset_id, loggedSize, rebuiltSize, reason });
    if (row.rebuilt_size === null || rebuiltSize < loggedSize) difference('EVENTS_MISSING');
    else if (!row.same_owner) difference('OWNER_CHANGED');
    else if (rebuiltSize === loggedSize) difference('EVENTS_CHANGED');
    else {
      // The log lagged: what it recorded must be the rebuilt tree's first leaves.
      const prefixRoot = await rootOfFirstLeaves(sql, apart, row.asset_id, loggedSize);
      if (!prefixRoot?.equals(Buffer.from(row.logged_root))) difference('EVENTS_CHANGED');
    }
  }
  return differences;
}

/** The root of the first `size` leaves of a rebuilt tree that has more (so its leaves are nodes: leafIsRoot). */
async function rootOfFirstLeaves(sql: SqlExecutor, apart: string, assetId: string, size: number): Promise<Hash | undefined> {
  const rows = await sql.query<{ idx: string | number; hash: Uint8Array }>(
    `SELECT idx, hash FROM ${apart}.merkle_nodes WHERE asset_id = $1 AND level = 0 AND idx < $2 ORDER BY idx`,
    [assetId, size],
  );
  const leaves = rows.map((row) => Buffer.from(row.hash));
  return rows.length === size && rows.every((row, index) => Number(row.idx) === index) ? referenceRoot(leaves) : undefined;
}
