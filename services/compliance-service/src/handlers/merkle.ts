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
import { type AssetTree, findAssetTree, findAssetTreeAndLeaf, readNodes } from '../store/merkle-store.ts';

export interface MerkleDeps {
  db: SqlDatabase;
  signCheckpoint: CheckpointSigner;
}

const algorithm = 'RFC9162_SHA256' as const;

export async function requireAssetTree(db: SqlDatabase, owner: Principal, assetId: string): Promise<AssetTree> {
  const tree = await findAssetTree(db, owner, assetId);
  if (!tree) throw new HallmarkError('NOT_FOUND', `Asset ${assetId} was not found.`, { assetId });
  return tree;
}

/** The root of the tree at `size` (≤ the current size), from stored nodes. */
export async function rootAt(db: SqlDatabase, tree: AssetTree, size: number): Promise<Buffer> {
  if (size === tree.treeSize) return tree.rootHash;
  if (size === 0) return emptyRootHash;
  return rootFromNodes(size, await readNodes(db, tree.assetId, nodesNeeded([rootRange(size)])));
}

/** GET /compliance/{assetId}/merkle/root. */
export async function merkleRoot(deps: MerkleDeps, owner: Principal, assetId: string): Promise<MerkleRoot> {
  const tree = await requireAssetTree(deps.db, owner, assetId);
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
  const found = await findAssetTreeAndLeaf(deps.db, owner, assetId, eventId);
  if (!found) throw new HallmarkError('NOT_FOUND', `Asset ${assetId} was not found.`, { assetId });
  const { tree, leafIndex } = found;
  if (leafIndex === undefined || leafIndex >= tree.treeSize) {
    throw new HallmarkError('NOT_FOUND', `Event ${eventId} is not in the history of asset ${assetId}.`, { assetId, eventId });
  }
  const lookup = await readNodes(deps.db, tree.assetId, [
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
  const tree = await requireAssetTree(deps.db, owner, assetId);
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
    tree.assetId,
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
    checkpoint: await deps.signCheckpoint(tree.owner, tree.assetId, toSize, toRoot),
  };
}
