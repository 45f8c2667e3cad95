import { emptyRootHash, type Hash, nodeHash } from './hashing.ts';
import {
  consistencyRanges,
  inclusionRanges,
  type LeafRange,
  type NodeAddress,
  nodesCompletedByAppend,
  perfectNodesOf,
} from './tree-math.ts';

/** Reads stored perfect-node hashes; throws when one is missing (the tree is smaller than asked). */
export type NodeLookup = (address: NodeAddress) => Hash;

export const nodeKey = (address: NodeAddress): string => `${address.level}:${address.index}`;

/** MTH of a range, folded right to left from its stored perfect nodes. */
export function hashRange(range: LeafRange, lookup: NodeLookup): Hash {
  const nodes = perfectNodesOf(range);
  const last = nodes.at(-1);
  if (!last) return emptyRootHash;
  let hash = lookup(last);
  for (let i = nodes.length - 2; i >= 0; i -= 1) hash = nodeHash(lookup(nodes[i] as NodeAddress), hash);
  return hash;
}

/** Every stored node needed to answer the given ranges, without repeats: fetch these in one read. */
export function nodesNeeded(ranges: readonly LeafRange[]): NodeAddress[] {
  const seen = new Map<string, NodeAddress>();
  for (const range of ranges) for (const node of perfectNodesOf(range)) seen.set(nodeKey(node), node);
  return [...seen.values()];
}

export const rootRange = (size: number): LeafRange => ({ start: 0, end: size });

export function rootFromNodes(size: number, lookup: NodeLookup): Hash {
  return hashRange(rootRange(size), lookup);
}

export function inclusionProofFromNodes(index: number, size: number, lookup: NodeLookup): Hash[] {
  return inclusionRanges(index, size).map((range) => hashRange(range, lookup));
}

export function consistencyProofFromNodes(from: number, to: number, lookup: NodeLookup): Hash[] {
  return consistencyRanges(from, to).map((range) => hashRange(range, lookup));
}

/** A lookup over an in-memory map of node hashes keyed by `nodeKey`. */
export function mapLookup(nodes: ReadonlyMap<string, Hash>): NodeLookup {
  return (address) => {
    const hash = nodes.get(nodeKey(address));
    if (!hash) throw new Error(`Merkle node ${nodeKey(address)} is not stored`);
    return hash;
  };
}

export interface StoredNode extends NodeAddress {
  hash: Hash;
}

/** The stored nodes an append to a tree of `size` leaves reads: its perfect subtrees. */
export const frontierOf = (size: number): NodeAddress[] => perfectNodesOf(rootRange(size));

/**
 * The nodes to store when leaves are appended to a tree of `size` leaves: the leaves themselves
 * (level 0) and every perfect subtree they complete. `lookup` must answer `frontierOf(size)`.
 */
export function appendLeaves(size: number, leaves: readonly Hash[], lookup: NodeLookup): StoredNode[] {
  const added = new Map<string, Hash>();
  const stored: StoredNode[] = [];
  const read = (address: NodeAddress) => added.get(nodeKey(address)) ?? lookup(address);
  const keep = (node: StoredNode) => {
    added.set(nodeKey(node), node.hash);
    stored.push(node);
  };
  for (const [offset, hash] of leaves.entries()) keep({ level: 0, index: size + offset, hash });
  for (const { level, index } of nodesCompletedByAppend(size, leaves.length)) {
    const left = read({ level: level - 1, index: index * 2 });
    const right = read({ level: level - 1, index: index * 2 + 1 });
    keep({ level, index, hash: nodeHash(left, right) });
  }
  return stored;
}
