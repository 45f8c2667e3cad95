export { emptyRootHash, type Hash, hashSize, leafHash, nodeHash } from './hashing.ts';
export { referenceConsistencyProof, referenceInclusionProof, referenceRoot } from './reference-tree.ts';
export {
  appendLeaves,
  consistencyProofFromNodes,
  frontierOf,
  hashRange,
  inclusionProofFromNodes,
  mapLookup,
  type NodeLookup,
  nodeKey,
  nodesNeeded,
  rootFromNodes,
  rootRange,
  type StoredNode,
} from './stored-tree.ts';
export {
  assertTreeSize,
  consistencyRanges,
  inclusionRanges,
  type LeafRange,
  type NodeAddress,
  nodesCompletedByAppend,
  perfectNodesOf,
  splitPoint,
} from './tree-math.ts';
export { rootFromInclusionProof, verifyConsistency, verifyInclusion } from './verify.ts';
