import { emptyRootHash, type Hash, nodeHash } from './hashing.ts';
import { splitPoint } from './tree-math.ts';

/**
 * RFC 9162's definitions written out recursively over a list of leaf hashes: MTH, PATH and PROOF.
 * Quadratic-ish and in memory; the stored tree must always agree with it.
 */
export function referenceRoot(leaves: readonly Hash[]): Hash {
  if (leaves.length === 0) return emptyRootHash;
  if (leaves.length === 1) return leaves[0] as Hash;
  const k = splitPoint(leaves.length);
  return nodeHash(referenceRoot(leaves.slice(0, k)), referenceRoot(leaves.slice(k)));
}

export function referenceInclusionProof(index: number, leaves: readonly Hash[]): Hash[] {
  if (leaves.length <= 1) return [];
  const k = splitPoint(leaves.length);
  return index < k
    ? [...referenceInclusionProof(index, leaves.slice(0, k)), referenceRoot(leaves.slice(k))]
    : [...referenceInclusionProof(index - k, leaves.slice(k)), referenceRoot(leaves.slice(0, k))];
}

export function referenceConsistencyProof(from: number, leaves: readonly Hash[]): Hash[] {
  if (from === 0 || from === leaves.length) return [];
  return subproof(from, leaves, true);
}

function subproof(m: number, leaves: readonly Hash[], complete: boolean): Hash[] {
  if (m === leaves.length) return complete ? [] : [referenceRoot(leaves)];
  const k = splitPoint(leaves.length);
  return m <= k
    ? [...subproof(m, leaves.slice(0, k), complete), referenceRoot(leaves.slice(k))]
    : [...subproof(m - k, leaves.slice(k), false), referenceRoot(leaves.slice(0, k))];
}
