import { HallmarkError, type MerkleProof, type MerkleRoot, type Principal } from '@hallmark/contracts';
import {
  consistencyProofFromNodes,
  consistencyRanges,
  emptyRootHash,
  inclusionProofFromNodes,
  inclusionRanges,
  nodesNeeded,
  rootFromNodes,
  rootRange,
} from '@hallmark/merkle';
import type { SqlDatabase } from '@hallmark/sql';
import type { CheckpointSigner } from '../checkpoint-signer.ts';
import type { ProjectionWait } from '../projection-wait.ts';
import { type AssetTree, findAssetTree, findAssetTreeAndLeaf, readNodes } from '../store/merkle-store.ts';

export interface MerkleDeps {
  db: SqlDatabase;
  signCheckpoint: CheckpointSigner;
  /**
   * Read your writes: reads wait (bounded) until the projection holds every event stored before
   * them. Without it (benchmarks, tools) they answer from the projection as it stands.
   */
  projectionWait?: ProjectionWait;
}

const algorithm = 'RFC9162_SHA256' as const;

/** The owner's asset tree, holding every event stored before the call (see MerkleDeps.projectionWait). */
export async function findCurrentAssetTree(
  deps: Pick<MerkleDeps, 'db' | 'projectionWait'>,
  owner: Principal,
  assetId: string,
): Promise<AssetTree | undefined> {
  const find = () => findAssetTree(deps.db, owner, assetId);
  return deps.projectionWait ? deps.projectionWait.read(assetId, find, (tree) => tree) : find();
}

/** NOT_FOUND for an unknown asset or another owner's; SERVICE_UNAVAILABLE when the projection lags past its bound. */
export async function requireAssetTree(deps: MerkleDeps, owner: Principal, assetId: string): Promise<AssetTree> {
  const tree = await findCurrentAssetTree(deps, owner, assetId);
  if (!tree) throw new HallmarkError('NOT_FOUND', `Asset ${assetId} was not found.`, { assetId });
  return tree;
}

/** The root of the tree at `size` (≤ the current size), from stored nodes. */
export async function rootAt(db: SqlDatabase, tree: AssetTree, size: number): Promise<Buffer> {
  if (size === tree.treeSize) return tree.rootHash;
  if (size === 0) return emptyRootHash;
  return rootFromNodes(size, await readNodes(db, tree, nodesNeeded([rootRange(size)])));
}

/** GET /compliance/{assetId}/merkle/root. */
export async function merkleRoot(deps: MerkleDeps, owner: Principal, assetId: string): Promise<MerkleRoot> {
  const tree = await requireAssetTree(deps, owner, assetId);
  return {
    assetId: tree.assetId,
    treeSize: tree.treeSize,
    rootHash: tree.rootHash.toString('hex'),
    algorithm,
    checkpoint: await deps.signCheckpoint(tree.owner, tree.assetId, tree.treeSize, tree.rootHash),
  };
}

/** GET /compliance/{assetId}/merkle/proof?eventId=: one query for the O(log n) nodes. */
export async function merkleProof(deps: MerkleDeps, owner: Principal, assetId: string, eventId: string): Promise<MerkleProof> {
  const find = () => findAssetTreeAndLeaf(deps.db, owner, assetId, eventId);
  // The tree must hold every stored event, so a just-written event's proof is there at once.
  const found = deps.projectionWait ? await deps.projectionWait.read(assetId, find, (seen) => seen?.tree) : await find();
  if (!found) throw new HallmarkError('NOT_FOUND', `Asset ${assetId} was not found.`, { assetId });
  const { tree, leafIndex } = found;
  if (leafIndex === undefined || leafIndex >= tree.treeSize) {
    throw new HallmarkError('NOT_FOUND', `Event ${eventId} is not in the history of asset ${assetId}.`, { assetId, eventId });
  }
  const lookup = await readNodes(deps.db, tree, [
    { level: 0, index: leafIndex },
    ...nodesNeeded(inclusionRanges(leafIndex, tree.treeSize)),
  ]);
  return {
    assetId: tree.assetId,
    eventId,
    leafIndex,
    treeSize: tree.treeSize,
    leafHash: lookup({ level: 0, index: leafIndex }).toString('hex'),
    rootHash: tree.rootHash.toString('hex'),
    auditPath: inclusionProofFromNodes(leafIndex, tree.treeSize, lookup).map((hash) => hash.toString('hex')),
    algorithm,
    checkpoint: await deps.signCheckpoint(tree.owner, tree.assetId, tree.treeSize, tree.rootHash),
  };
}

/** GET /compliance/{assetId}/merkle/consistency?from=&to=. */
export async function merkleConsistency(deps: MerkleDeps, owner: Principal, assetId: string, from: number, to?: number) {
  const tree = await requireAssetTree(deps, owner, assetId);
  const toSize = to ?? tree.treeSize;
  if (from > toSize || toSize > tree.treeSize) {
    throw new HallmarkError(
      'VALIDATION_ERROR',
      `Invalid request: need 1 ≤ from ≤ to ≤ ${tree.treeSize} (the current tree size).`,
      {
        fields: [
          { field: from > toSize ? 'from' : 'to', in: 'querystring', message: `must satisfy 1 ≤ from ≤ to ≤ ${tree.treeSize}` },
        ],
        treeSize: tree.treeSize,
      },
    );
  }
  const lookup = await readNodes(
    deps.db,
    tree,
    nodesNeeded([...consistencyRanges(from, toSize), rootRange(from), rootRange(toSize)]),
  );
  const toRoot = rootFromNodes(toSize, lookup);
  return {
    assetId: tree.assetId,
    fromSize: from,
    toSize,
    fromRootHash: rootFromNodes(from, lookup).toString('hex'),
    toRootHash: toRoot.toString('hex'),
    proof: consistencyProofFromNodes(from, toSize, lookup).map((hash) => hash.toString('hex')),
    algorithm,
    // Only the current tree is signed: a checkpoint of an older size signed now would say the
    // history ended there today, and an export cut to it would pass an audit as complete.
    ...(toSize === tree.treeSize ? { checkpoint: await deps.signCheckpoint(tree.owner, tree.assetId, toSize, toRoot) } : {}),
  };
}
