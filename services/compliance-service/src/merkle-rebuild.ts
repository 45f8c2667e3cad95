import type { EventStore } from '@hallmark/event-store';
import { type Hash, referenceRoot } from '@hallmark/merkle';
import type { SqlDatabase, SqlExecutor } from '@hallmark/sql';
import { merkleProjectionName, projectEvents } from './merkle-projection.ts';
import { readLeafHashes } from './store/merkle-store.ts';

/** Where the replay writes, beside the log it may replace: the log stays as it was until the two are compared. */
const rebuildSchema = 'hallmark_merkle_rebuild';
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
  | { outcome: 'differs'; events: number; differences: LogDifference[] };

const quoted = (identifier: string) => `"${identifier.replaceAll('"', '""')}"`;

/**
 * Replays every event into a Merkle log built apart (schema hallmark_merkle_rebuild), compares it
 * with the log the product holds, and replaces that log only if every tree it recorded is the same
 * or a prefix of the rebuilt one (the projection had not caught up). A log that recorded events the
 * store no longer gives (deleted, rewritten, moved to another owner) is what
 * GET /compliance/{assetId}/verify reports as LOG_MISMATCH: replacing it would erase that evidence,
 * so the log is left as it was and the differences come back, unless `acceptDifferences` (the
 * operator knows why, e.g. the event store was restored from a backup older than the log).
 * A crash part-way leaves the product's log untouched; the next rebuild starts the apart one again.
 */
export async function rebuildMerkleProjection(
  db: SqlDatabase,
  eventStore: EventStore,
  options: { acceptDifferences?: boolean; name?: string } = {},
): Promise<RebuildOutcome> {
  const name = options.name ?? merkleProjectionName;
  const [{ schema } = { schema: 'public' }] = await db.query<{ schema: string }>('SELECT current_schema() AS schema');
  const product = quoted(schema);
  await db.transaction(async (tx) => {
    await tx.query(`DROP SCHEMA IF EXISTS ${rebuildSchema} CASCADE`);
    await tx.query(`CREATE SCHEMA ${rebuildSchema}`);
    for (const table of projectionTables) {
      await tx.query(`CREATE TABLE ${rebuildSchema}.${table} (LIKE ${product}.${table} INCLUDING ALL)`);
    }
  });
  try {
    let cursor: string | undefined;
    let events = 0;
    for (;;) {
      const page = await eventStore.readAll(cursor === undefined ? { limit: pageSize } : { after: cursor, limit: pageSize });
      if (page.events.length === 0) break;
      await db.transaction(async (tx) => {
        // The projection's statements name its tables unqualified: here they are the apart ones.
        await tx.query(`SELECT set_config('search_path', $1, true)`, [rebuildSchema]);
        await projectEvents(tx, page.events);
      });
      events += page.events.length;
      cursor = page.cursor;
    }
    const differences = await compareLogs(db, product);
    if (differences.length > 0 && !options.acceptDifferences) return { outcome: 'differs', events, differences };
    await db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`hallmark:projection:${name}`]);
      await tx.query(`TRUNCATE ${projectionTables.map((table) => `${product}.${table}`).join(', ')}`);
      for (const table of projectionTables) {
        await tx.query(`INSERT INTO ${product}.${table} SELECT * FROM ${rebuildSchema}.${table}`);
      }
      await tx.query(`DELETE FROM ${product}.projection_checkpoints WHERE name = $1`, [name]);
      if (cursor !== undefined) {
        await tx.query(`INSERT INTO ${product}.projection_checkpoints (name, cursor) VALUES ($1, $2)`, [name, cursor]);
      }
    });
    // Fresh statistics, so the planner probes the primary key instead of scanning a tree it thinks small.
    await db.query(`ANALYZE ${projectionTables.map((table) => `${product}.${table}`).join(', ')}`);
    return { outcome: 'rebuilt', events, differences };
  } finally {
    await db.query(`DROP SCHEMA IF EXISTS ${rebuildSchema} CASCADE`);
  }
}

/**
 * Every asset of the product's log whose recorded tree the rebuilt one does not reproduce: missing,
 * another owner, fewer leaves, or another root at the recorded size. An asset the log has not
 * recorded yet, or recorded fewer leaves of, is no difference if those leaves are the same.
 */
async function compareLogs(db: SqlDatabase, product: string): Promise<LogDifference[]> {
  const rows = await db.query<{
    asset_id: string;
    logged_size: string | number;
    logged_root: Uint8Array;
    rebuilt_size: string | number | null;
    same_owner: boolean | null;
  }>(
    `SELECT p.asset_id, p.tree_size AS logged_size, p.root_hash AS logged_root, r.tree_size AS rebuilt_size,
       (p.account_id = r.account_id AND p.environment = r.environment) AS same_owner
     FROM ${product}.provenance_assets p LEFT JOIN ${rebuildSchema}.provenance_assets r ON r.asset_id = p.asset_id
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
      const prefixRoot = await rootOfFirstLeaves(db, row.asset_id, rebuiltSize, loggedSize);
      if (!prefixRoot?.equals(Buffer.from(row.logged_root))) difference('EVENTS_CHANGED');
    }
  }
  return differences;
}

/** The root of the first `size` leaves of a rebuilt tree of `treeSize` leaves (treeSize > 1, so its leaves are nodes). */
async function rootOfFirstLeaves(db: SqlDatabase, assetId: string, treeSize: number, size: number): Promise<Hash | undefined> {
  return db.transaction(async (tx: SqlExecutor) => {
    await tx.query(`SELECT set_config('search_path', $1, true)`, [rebuildSchema]);
    const leaves = await readLeafHashes(tx, { assetId, treeSize, rootHash: Buffer.alloc(0) }, 0, size);
    const ordered = Array.from({ length: size }, (_, index) => leaves.get(index));
    return ordered.every((leaf) => leaf !== undefined) ? referenceRoot(ordered as Hash[]) : undefined;
  });
}
