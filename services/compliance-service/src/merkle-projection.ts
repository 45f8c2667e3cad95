import { createSqlProjection, type EventStore, type StoredEvent } from '@hallmark/event-store';
import {
  appendLeaves,
  frontierOf,
  type Hash,
  leafHash,
  mapLookup,
  type NodeLookup,
  nodeKey,
  rootFromNodes,
  type StoredNode,
} from '@hallmark/merkle';
import { assetIdOfStream, type ChainedRecord, chainedRecordOf, leafInputOf } from '@hallmark/provenance';
import type { SqlDatabase, SqlExecutor } from '@hallmark/sql';
import { firstLeaf, leafIsRoot } from './store/merkle-store.ts';

export const merkleProjectionName = 'compliance-merkle';

interface AssetBatch {
  assetId: string;
  first: ChainedRecord;
  events: Array<{ eventId: string; record: ChainedRecord }>;
  alias: string | undefined;
}

/** The one event type whose data the projection reads (aliasOf); of every other event it needs only the chain fields. */
const aliasedType = 'registered';

/** An auction object is also found by its service serial, which its `registered` event carries. */
function aliasOf(record: ChainedRecord): string | undefined {
  const serial = record.data.serviceSerial;
  return record.type === aliasedType && typeof serial === 'string' ? serial : undefined;
}

function groupByAsset(events: readonly StoredEvent[]): Map<string, AssetBatch> {
  const batches = new Map<string, AssetBatch>();
  for (const event of events) {
    const assetId = assetIdOfStream(event.streamId);
    const record = chainedRecordOf(event);
    if (!assetId || !record) continue;
    let batch = batches.get(assetId);
    if (!batch) {
      batch = { assetId, first: record, events: [], alias: undefined };
      batches.set(assetId, batch);
    }
    batch.events.push({ eventId: event.eventId, record });
    batch.alias ??= aliasOf(record);
  }
  return batches;
}

/**
 * Whether every asset of a page starts in it: each asset's first event here is its first event at
 * all (a new code's `code.generated`, a new object's `registered`). Such a page reads no tree: every
 * tree is empty before it. Were one not (a page projected twice), inserting its asset row again
 * breaks provenance_assets' key, and the page fails instead of forking a tree.
 */
export function startsEveryAsset(events: readonly StoredEvent[]): boolean {
  return startsEvery(groupByAsset(events));
}

function startsEvery(batches: Map<string, AssetBatch>): boolean {
  for (const batch of batches.values()) if (batch.first.sequence !== 1) return false;
  return true;
}

interface TreeTops {
  sizes: Map<string, number>;
  /** Per asset, the frontier's nodes by nodeKey: all appendLeaves needs of the stored tree. */
  frontiers: Map<string, Map<string, Hash>>;
}

/**
 * Each tree's size and frontier, its row locked. A one-leaf tree's frontier is its leaf, which it
 * keeps as its root hash (leafIsRoot); a larger tree's frontier is in merkle_nodes.
 */
async function readTreeTops(tx: SqlExecutor, assetIds: readonly string[]): Promise<TreeTops> {
  const assetRows = await tx.query<{ asset_id: string; tree_size: string | number; root_hash: Uint8Array }>(
    'SELECT asset_id, tree_size, root_hash FROM provenance_assets WHERE asset_id = ANY($1::text[]) FOR UPDATE',
    [assetIds],
  );
  const sizes = new Map(assetRows.map((row) => [row.asset_id, Number(row.tree_size)]));
  const frontiers = new Map<string, Map<string, Hash>>();
  for (const row of assetRows) {
    if (!leafIsRoot(Number(row.tree_size))) continue;
    frontiers.set(row.asset_id, new Map([[nodeKey(firstLeaf), Buffer.from(row.root_hash)]]));
  }

  const wanted = assetIds.flatMap((assetId) => {
    const size = sizes.get(assetId) ?? 0;
    return leafIsRoot(size) ? [] : frontierOf(size).map((node) => ({ assetId, ...node }));
  });
  const frontierRows = wanted.length
    ? await tx.query<{ asset_id: string; level: number; idx: string | number; hash: Uint8Array }>(
        `SELECT w.asset_id, w.level, w.idx, m.hash FROM unnest($1::text[], $2::smallint[], $3::bigint[]) AS w(asset_id, level, idx)
         CROSS JOIN LATERAL (
           SELECT hash FROM merkle_nodes WHERE asset_id = w.asset_id AND level = w.level AND idx = w.idx
         ) AS m`,
        [wanted.map((w) => w.assetId), wanted.map((w) => w.level), wanted.map((w) => w.index)],
      )
    : [];
  for (const row of frontierRows) {
    const nodes = frontiers.get(row.asset_id) ?? new Map<string, Hash>();
    nodes.set(nodeKey({ level: row.level, index: Number(row.idx) }), Buffer.from(row.hash));
    frontiers.set(row.asset_id, nodes);
  }
  return { sizes, frontiers };
}

/**
 * The merkle_nodes rows of an append from `size` to `treeSize` leaves. A tree left at one leaf has
 * none: its leaf is its root hash. A tree growing past one leaf stores that first leaf now
 * (`firstLeaf`), apart from the nodes the append added (see insertFirstLeaves).
 */
function nodesToStore(
  size: number,
  treeSize: number,
  added: readonly StoredNode[],
  lookup: NodeLookup,
): { firstLeaf: StoredNode | undefined; added: readonly StoredNode[] } {
  if (leafIsRoot(treeSize)) return { firstLeaf: undefined, added: [] };
  return { firstLeaf: leafIsRoot(size) ? { ...firstLeaf, hash: lookup(firstLeaf) } : undefined, added };
}

interface TreeRow {
  batch: AssetBatch;
  treeSize: number;
  rootHash: Hash;
}

/** Trees the page starts: the asset's first event (leaf 0) goes in its row, not in provenance_events. */
interface NewTreeRow extends TreeRow {
  firstEventId: string;
}

/**
 * Adds a batch of events to the asset trees: reads each tree's size and frontier (none when every
 * asset starts in the batch, see startsEveryAsset), computes the new nodes and roots in memory, and
 * writes them with a few set-based statements.
 */
export async function projectEvents(tx: SqlExecutor, events: readonly StoredEvent[]): Promise<void> {
  const batches = groupByAsset(events);
  if (batches.size === 0) return;
  const { sizes, frontiers: known } = startsEvery(batches)
    ? { sizes: new Map<string, number>(), frontiers: new Map<string, Map<string, Hash>>() }
    : await readTreeTops(tx, [...batches.keys()]);

  const nodeRows: Array<StoredNode & { assetId: string }> = [];
  const firstLeafRows: Array<StoredNode & { assetId: string }> = [];
  const eventRows: Array<{ eventId: string; assetId: string; leafIndex: number }> = [];
  const newTrees: NewTreeRow[] = [];
  const grownTrees: TreeRow[] = [];
  for (const batch of batches.values()) {
    const size = sizes.get(batch.assetId) ?? 0;
    // Replays after a crash between commit and acknowledgement are skipped by sequence.
    const fresh = batch.events.filter((event) => event.record.sequence > size);
    const [firstFresh] = fresh;
    if (!firstFresh) continue;
    fresh.forEach((event, offset) => {
      if (event.record.sequence !== size + offset + 1) {
        throw new Error(`Asset ${batch.assetId}: event ${event.record.sequence} arrived where ${size + offset + 1} belongs`);
      }
    });
    const nodes = known.get(batch.assetId) ?? new Map<string, Hash>();
    const added = appendLeaves(
      size,
      fresh.map((event) => leafHash(leafInputOf(event.record.hash))),
      mapLookup(nodes),
    );
    for (const node of added) nodes.set(nodeKey(node), node.hash);
    const treeSize = size + fresh.length;
    const toStore = nodesToStore(size, treeSize, added, mapLookup(nodes));
    if (toStore.firstLeaf) firstLeafRows.push({ ...toStore.firstLeaf, assetId: batch.assetId });
    for (const node of toStore.added) nodeRows.push({ ...node, assetId: batch.assetId });
    fresh.forEach((event, offset) => {
      if (size + offset > 0) eventRows.push({ eventId: event.eventId, assetId: batch.assetId, leafIndex: size + offset });
    });
    const tree = { batch, treeSize, rootHash: rootFromNodes(treeSize, mapLookup(nodes)) };
    if (size === 0) newTrees.push({ ...tree, firstEventId: firstFresh.eventId });
    else grownTrees.push(tree);
  }

  if (firstLeafRows.length > 0) await insertFirstLeaves(tx, firstLeafRows);
  if (nodeRows.length > 0) await insertNodes(tx, nodeRows);
  if (eventRows.length > 0) await insertLaterEvents(tx, eventRows);
  if (newTrees.length > 0) await insertNewTrees(tx, newTrees);
  if (grownTrees.length > 0) await updateGrownTrees(tx, grownTrees);
}

const nodesInsert = `INSERT INTO merkle_nodes (asset_id, level, idx, hash)
  SELECT a, l, i, decode(h, 'hex') FROM unnest($1::text[], $2::smallint[], $3::bigint[], $4::text[]) AS n(a, l, i, h)`;
const nodeParams = (rows: ReadonlyArray<StoredNode & { assetId: string }>) => [
  rows.map((n) => n.assetId),
  rows.map((n) => n.level),
  rows.map((n) => n.index),
  rows.map((n) => n.hash.toString('hex')),
];

/** New nodes: one already stored means the page was projected before, and it fails on the key. */
async function insertNodes(tx: SqlExecutor, rows: ReadonlyArray<StoredNode & { assetId: string }>): Promise<void> {
  await tx.query(nodesInsert, nodeParams(rows));
}

/**
 * The first leaf of trees growing past one leaf. It is stored already for a tree stored before
 * migration 0005 (which left those rows as they were) or by the release before during a rolling
 * update: every leaf went to merkle_nodes then. That row holds the same hash (the leaf of the
 * asset's first event, which the asset row's root repeats), so it is kept.
 */
async function insertFirstLeaves(tx: SqlExecutor, rows: ReadonlyArray<StoredNode & { assetId: string }>): Promise<void> {
  await tx.query(`${nodesInsert} ON CONFLICT (asset_id, level, idx) DO NOTHING`, nodeParams(rows));
}

/** Events after an asset's first: the first is its asset row's first_event_id. */
async function insertLaterEvents(
  tx: SqlExecutor,
  rows: ReadonlyArray<{ eventId: string; assetId: string; leafIndex: number }>,
): Promise<void> {
  await tx.query(
    `INSERT INTO provenance_events (event_id, asset_id, leaf_index)
     SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])`,
    [rows.map((e) => e.eventId), rows.map((e) => e.assetId), rows.map((e) => e.leafIndex)],
  );
}

/**
 * A tree the page starts has no row yet. One there means the page was projected already: the
 * insert then fails on the key rather than set a grown tree back to this page's size.
 */
async function insertNewTrees(tx: SqlExecutor, trees: readonly NewTreeRow[]): Promise<void> {
  await tx.query(
    `INSERT INTO provenance_assets (asset_id, account_id, environment, alias, first_event_id, tree_size, root_hash)
     SELECT a, acc, env, al, f, s, decode(r, 'hex')
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::uuid[], $6::bigint[], $7::text[]) AS x(a, acc, env, al, f, s, r)`,
    [
      trees.map((t) => t.batch.assetId),
      trees.map((t) => t.batch.first.accountId),
      trees.map((t) => t.batch.first.environment),
      trees.map((t) => t.batch.alias ?? null),
      trees.map((t) => t.firstEventId),
      trees.map((t) => t.treeSize),
      trees.map((t) => t.rootHash.toString('hex')),
    ],
  );
}

/** Trees read (and locked) by readTreeTops: their first event and owner stay; a first alias stays. */
async function updateGrownTrees(tx: SqlExecutor, trees: readonly TreeRow[]): Promise<void> {
  await tx.query(
    `UPDATE provenance_assets AS p
     SET tree_size = x.s, root_hash = decode(x.r, 'hex'), alias = COALESCE(p.alias, x.al), updated_at = now()
     FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[]) AS x(a, al, s, r)
     WHERE p.asset_id = x.a`,
    [
      trees.map((t) => t.batch.assetId),
      trees.map((t) => t.batch.alias ?? null),
      trees.map((t) => t.treeSize),
      trees.map((t) => t.rootHash.toString('hex')),
    ],
  );
}

/**
 * The Merkle projection as a subscription handler: rows and checkpoint in one transaction, exactly
 * once, any replica may run it (createSqlProjection); `onProjected` after each batch.
 */
export function createMerkleProjection(db: SqlDatabase, name = merkleProjectionName, options: { onProjected?: () => void } = {}) {
  return createSqlProjection({
    db,
    name,
    checkpointTable: 'projection_checkpoints',
    project: projectEvents,
    // A page of new assets only (what generation writes) reads nothing: its statements go in one trip.
    writeOnly: startsEveryAsset,
    // Readers waiting for these events look again now rather than at their next poll.
    ...(options.onProjected ? { onProjected: options.onProjected } : {}),
  });
}
export type MerkleProjection = ReturnType<typeof createMerkleProjection>;

/** Follows the event store from the projection's checkpoint. */
export function runMerkleProjection(eventStore: EventStore, projection: MerkleProjection, onError: (error: unknown) => void) {
  return eventStore.subscribe({
    name: projection.name,
    checkpoints: projection.checkpoints,
    handle: projection.handle,
    onError,
    // The per-transaction work (lock, checkpoint, statements) is paid once per page: take large
    // pages, and let a trickle of events gather for a moment; a reader waiting for the events cuts
    // the moment short (`wake`, see projection-wait.ts), so it delays no answer.
    batchSize: 2_000,
    lingerMs: 100,
    // A leaf is its event's hash, in the chain fields (metadata): the events' data is not read, but
    // for the aliases. (A `code.generated` event's data is most of its bytes.)
    dataOfTypes: [aliasedType],
  });
}
