import { fileURLToPath } from 'node:url';
import { migrateAccounts } from '@hallmark/accounts';
import type { Environment, Principal } from '@hallmark/contracts';
import { type Hash, mapLookup, type NodeAddress, type NodeLookup, nodeKey } from '@hallmark/merkle';
import { loadMigrations, runMigrations, type SqlDatabase, type SqlExecutor } from '@hallmark/sql';

const folder = fileURLToPath(new URL('../../migrations', import.meta.url));

/**
 * compliance-service's tables, after the accounts tables: it signs with the accounts' keys, and its
 * trigger moves their cache epochs (migration 0011 calls `bump_named_cache_epoch`).
 */
export async function migrateCompliance(db: SqlDatabase): Promise<void> {
  await migrateAccounts(db);
  await runMigrations(db, await loadMigrations('compliance-service', folder));
}

export interface AssetTree {
  assetId: string;
  owner: Principal;
  alias: string | null;
  treeSize: number;
  rootHash: Hash;
}

interface AssetRow {
  asset_id: string;
  account_id: string;
  environment: Environment;
  alias: string | null;
  tree_size: string | number;
  root_hash: Uint8Array;
}

const toAssetTree = (row: AssetRow): AssetTree => ({
  assetId: row.asset_id,
  owner: { accountId: row.account_id, environment: row.environment },
  alias: row.alias,
  treeSize: Number(row.tree_size),
  rootHash: Buffer.from(row.root_hash),
});

/** The owner's asset by id or alias (an auction object's service_serial); another owner's is not found. */
export async function findAssetTree(sql: SqlExecutor, owner: Principal, idOrAlias: string): Promise<AssetTree | undefined> {
  const rows = await sql.query<AssetRow>(
    `SELECT asset_id, account_id, environment, alias, tree_size, root_hash FROM provenance_assets
     WHERE account_id = $1 AND environment = $2 AND (asset_id = $3 OR alias = $3)
     ORDER BY asset_id = $3 DESC LIMIT 1`,
    [owner.accountId, owner.environment, idOrAlias],
  );
  return rows[0] ? toAssetTree(rows[0]) : undefined;
}

/** Whether the Merkle log holds the asset under another owner than `owner` (by id; aliases are an owner's own). */
export async function loggedForAnotherOwner(sql: SqlExecutor, owner: Principal, assetId: string): Promise<boolean> {
  const rows = await sql.query(
    'SELECT 1 FROM provenance_assets WHERE asset_id = $1 AND NOT (account_id = $2 AND environment = $3)',
    [assetId, owner.accountId, owner.environment],
  );
  return rows.length > 0;
}

/** How many events of the asset the projection holds, whoever owns it (0: none yet). */
export async function projectedTreeSize(sql: SqlExecutor, assetId: string): Promise<number> {
  const rows = await sql.query<{ tree_size: string | number }>('SELECT tree_size FROM provenance_assets WHERE asset_id = $1', [
    assetId,
  ]);
  return Number(rows[0]?.tree_size ?? 0);
}

/**
 * A one-leaf tree (a generated code's, most assets) keeps its leaf only as its root hash: node
 * (0, 0) enters merkle_nodes when the tree grows past one leaf. An asset's first event (leaf 0) is
 * its row's first_event_id at any size, not a provenance_events row (migration 0005). Trees stored
 * before 0005, or by the release before during a rolling update, have leaf 0 in both tables and no
 * first_event_id; read here the same way (a one-leaf tree from its root, leaf 0 from its row).
 */
export const leafIsRoot = (treeSize: number): boolean => treeSize === 1;

export const firstLeaf: NodeAddress = { level: 0, index: 0 };

/** What the stored nodes of a tree depend on: a one-leaf tree has none, only its root hash. */
export type StoredTreeHead = Pick<AssetTree, 'assetId' | 'treeSize' | 'rootHash'>;

/** Reads the given nodes of an asset's tree in one query (none for a one-leaf tree, see leafIsRoot). */
export async function readNodes(sql: SqlExecutor, tree: StoredTreeHead, addresses: readonly NodeAddress[]): Promise<NodeLookup> {
  const nodes = new Map<string, Hash>();
  if (leafIsRoot(tree.treeSize)) {
    nodes.set(nodeKey(firstLeaf), tree.rootHash);
  } else if (addresses.length > 0) {
    const rows = await sql.query<{ level: number; idx: string | number; hash: Uint8Array }>(
      // LATERAL: one primary-key probe per wanted node, never a scan of the asset's whole tree.
      `SELECT w.level, w.idx, m.hash FROM unnest($2::smallint[], $3::bigint[]) AS w(level, idx)
       CROSS JOIN LATERAL (SELECT hash FROM merkle_nodes WHERE asset_id = $1 AND level = w.level AND idx = w.idx) AS m`,
      [tree.assetId, addresses.map((a) => a.level), addresses.map((a) => a.index)],
    );
    for (const row of rows) nodes.set(nodeKey({ level: row.level, index: Number(row.idx) }), Buffer.from(row.hash));
  }
  return mapLookup(nodes);
}

/** Stored leaf hashes of leaves [from, to) (a one-leaf tree's leaf is its root hash, see leafIsRoot). */
export async function readLeafHashes(
  sql: SqlExecutor,
  tree: StoredTreeHead,
  from: number,
  to: number,
): Promise<Map<number, Hash>> {
  if (leafIsRoot(tree.treeSize)) return new Map(from <= 0 && to > 0 ? [[0, tree.rootHash]] : []);
  const rows = await sql.query<{ idx: string | number; hash: Uint8Array }>(
    'SELECT idx, hash FROM merkle_nodes WHERE asset_id = $1 AND level = 0 AND idx >= $2 AND idx < $3',
    [tree.assetId, from, to],
  );
  return new Map(rows.map((row) => [Number(row.idx), Buffer.from(row.hash)]));
}

/**
 * The asset and where one of its events sits in its tree, in one query (the proof's hot path). The
 * asset's first event is leaf 0 by its row's first_event_id; later ones are in provenance_events. The
 * event id comes from the request and need not be a UUID: it is compared as text, so a malformed one
 * is simply not found.
 */
export async function findAssetTreeAndLeaf(
  sql: SqlExecutor,
  owner: Principal,
  idOrAlias: string,
  eventId: string,
): Promise<{ tree: AssetTree; leafIndex: number | undefined } | undefined> {
  const rows = await sql.query<AssetRow & { leaf_index: string | number | null }>(
    `SELECT a.asset_id, a.account_id, a.environment, a.alias, a.tree_size, a.root_hash,
       CASE WHEN a.first_event_id::text = $4 THEN 0 ELSE e.leaf_index END AS leaf_index
     FROM provenance_assets a LEFT JOIN provenance_events e ON e.asset_id = a.asset_id AND e.event_id = $4
     WHERE a.account_id = $1 AND a.environment = $2 AND (a.asset_id = $3 OR a.alias = $3)
     ORDER BY a.asset_id = $3 DESC LIMIT 1`,
    [owner.accountId, owner.environment, idOrAlias, eventId],
  );
  const row = rows[0];
  return row ? { tree: toAssetTree(row), leafIndex: row.leaf_index === null ? undefined : Number(row.leaf_index) } : undefined;
}
