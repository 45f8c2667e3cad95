import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  appendLeaves,
  consistencyProofFromNodes,
  emptyRootHash,
  type Hash,
  inclusionProofFromNodes,
  leafHash,
  mapLookup,
  type NodeLookup,
  nodeHash,
  nodeKey,
  referenceConsistencyProof,
  referenceInclusionProof,
  referenceRoot,
  rootFromNodes,
  verifyConsistency,
  verifyInclusion,
} from './index.ts';

const hex = (value: string) => Buffer.from(value, 'hex');

// Published RFC 6962 test vectors, as kept by transparency-dev/merkle (testonly/constants.go and
// proof/verify_test.go): eight leaf inputs, the root of every prefix, and known proofs.
const leafInputs = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map(hex);
const roots = [
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
].map(hex);
const inclusionVectors = [
  {
    leaf: 0,
    size: 8,
    proof: [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  },
  {
    leaf: 5,
    size: 8,
    proof: [
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  },
  { leaf: 2, size: 3, proof: ['fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125'] },
  {
    leaf: 1,
    size: 5,
    proof: [
      '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  },
];
const consistencyVectors = [
  {
    from: 1,
    to: 8,
    proof: [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  },
  {
    from: 6,
    to: 8,
    proof: [
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  },
  {
    from: 2,
    to: 5,
    proof: [
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  },
  {
    from: 6,
    to: 7,
    proof: [
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  },
];

/** Builds a stored tree by appending leaves in the given chunk sizes, as the projection does. */
function storedTree(leaves: readonly Hash[], chunk = 3): NodeLookup {
  const nodes = new Map<string, Hash>();
  for (let size = 0; size < leaves.length; size += chunk) {
    for (const node of appendLeaves(size, leaves.slice(size, size + chunk), mapLookup(nodes)))
      nodes.set(nodeKey(node), node.hash);
  }
  return mapLookup(nodes);
}

const flip = (hash: Hash, byte = 0) => {
  const copy = Buffer.from(hash);
  copy[byte] = (copy[byte] ?? 0) ^ 0x10;
  return copy;
};

describe('RFC 6962 / 9162 test vectors', () => {
  const leaves = leafInputs.map(leafHash);

  it('hashes the empty tree, leaves and every prefix root', () => {
    expect(emptyRootHash.toString('hex')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(leaves[0]?.toString('hex')).toBe('6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d');
    const lookup = storedTree(leaves);
    roots.forEach((root, i) => {
      expect(referenceRoot(leaves.slice(0, i + 1))).toEqual(root);
      expect(rootFromNodes(i + 1, lookup)).toEqual(root);
    });
  });

  it('produces and verifies the published inclusion proofs', () => {
    const lookup = storedTree(leaves);
    for (const vector of inclusionVectors) {
      const proof = vector.proof.map(hex);
      const root = roots[vector.size - 1] as Hash;
      const leaf = leaves[vector.leaf] as Hash;
      // Our generator only sees stored nodes of the full tree; sizes below 8 are prefixes of it.
      expect(inclusionProofFromNodes(vector.leaf, vector.size, lookup)).toEqual(proof);
      expect(verifyInclusion(vector.leaf, vector.size, leaf, proof, root)).toBe(true);
      expect(verifyInclusion(vector.leaf + 1, vector.size, leaf, proof, root)).toBe(false);
      expect(verifyInclusion(vector.leaf, vector.size * 2, leaf, proof, root)).toBe(false);
      expect(verifyInclusion(vector.leaf, vector.size, leaf, [...proof, root], root)).toBe(false);
      expect(verifyInclusion(vector.leaf, vector.size, leaf, proof.slice(1), root)).toBe(false);
      proof.forEach((_, i) => {
        const altered = proof.map((hash, j) => (i === j ? flip(hash) : hash));
        expect(verifyInclusion(vector.leaf, vector.size, leaf, altered, root)).toBe(false);
      });
    }
  });

  it('produces and verifies the published consistency proofs', () => {
    const lookup = storedTree(leaves);
    for (const vector of consistencyVectors) {
      const proof = vector.proof.map(hex);
      const fromRoot = roots[vector.from - 1] as Hash;
      const toRoot = roots[vector.to - 1] as Hash;
      expect(consistencyProofFromNodes(vector.from, vector.to, lookup)).toEqual(proof);
      expect(referenceConsistencyProof(vector.from, leaves.slice(0, vector.to))).toEqual(proof);
      expect(verifyConsistency(vector.from, vector.to, fromRoot, toRoot, proof)).toBe(true);
      expect(verifyConsistency(vector.from, vector.to, toRoot, fromRoot, proof)).toBe(false);
      expect(verifyConsistency(vector.from + 1, vector.to, fromRoot, toRoot, proof)).toBe(false);
      expect(verifyConsistency(vector.from, vector.to, fromRoot, toRoot, [])).toBe(false);
      expect(verifyConsistency(vector.from, vector.to, fromRoot, toRoot, proof.slice(0, -1))).toBe(false);
    }
  });

  it('treats the trivial consistency cases as RFC 9162 says', () => {
    const root = roots[2] as Hash;
    expect(verifyConsistency(3, 3, root, root, [])).toBe(true);
    expect(verifyConsistency(3, 3, root, roots[3] as Hash, [])).toBe(false);
    expect(verifyConsistency(0, 3, emptyRootHash, root, [])).toBe(true);
    expect(verifyConsistency(4, 3, root, root, [])).toBe(false);
    // Found by a review (2026-12-07): the empty tree's root is the hash of nothing, not any root given;
    // and roots are hashes whatever the sizes (two empty byte strings were "equal roots" of a tree of 3).
    expect(verifyConsistency(0, 5, root, root, [])).toBe(false);
    expect(verifyConsistency(0, 3, emptyRootHash, root, [root])).toBe(false);
    expect(verifyConsistency(3, 3, Buffer.alloc(0), Buffer.alloc(0), [])).toBe(false);
    expect(verifyConsistency(0, 3, emptyRootHash, Buffer.alloc(0), [])).toBe(false);
  });
});

describe('random trees', () => {
  const treeArbitrary = fc
    .array(fc.uint8Array({ maxLength: 12 }), { minLength: 1, maxLength: 70 })
    // Distinct leaves: with two equal leaves a proof can honestly fit another index too.
    .map((inputs) => inputs.map((input, i) => leafHash(Buffer.concat([Buffer.from(`${i}:`), input]))));

  it('agree with RFC 9162 recursion; every inclusion proof verifies and every altered one fails', () => {
    fc.assert(
      fc.property(treeArbitrary, fc.nat(), fc.nat({ max: 7 }), (leaves, pick, chunk) => {
        const lookup = storedTree(leaves, chunk + 1);
        const size = leaves.length;
        const root = rootFromNodes(size, lookup);
        expect(root).toEqual(referenceRoot(leaves));
        const index = pick % size;
        const proof = inclusionProofFromNodes(index, size, lookup);
        expect(proof).toEqual(referenceInclusionProof(index, leaves));
        expect(verifyInclusion(index, size, leaves[index] as Hash, proof, root)).toBe(true);
        for (let i = 0; i < proof.length; i += 1) {
          const altered = proof.map((hash, j) => (i === j ? flip(hash, pick % 32) : hash));
          expect(verifyInclusion(index, size, leaves[index] as Hash, altered, root)).toBe(false);
        }
        if (size > 1) expect(verifyInclusion((index + 1) % size, size, leaves[index] as Hash, proof, root)).toBe(false);
        expect(verifyInclusion(index, size, flip(leaves[index] as Hash), proof, root)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('every consistency proof verifies and every altered one fails', () => {
    fc.assert(
      fc.property(treeArbitrary, fc.nat(), (leaves, pick) => {
        const lookup = storedTree(leaves);
        const to = leaves.length;
        const from = 1 + (pick % to);
        const proof = consistencyProofFromNodes(from, to, lookup);
        expect(proof).toEqual(referenceConsistencyProof(from, leaves));
        const fromRoot = rootFromNodes(from, lookup);
        const toRoot = rootFromNodes(to, lookup);
        expect(verifyConsistency(from, to, fromRoot, toRoot, proof)).toBe(true);
        for (let i = 0; i < proof.length; i += 1) {
          const altered = proof.map((hash, j) => (i === j ? flip(hash) : hash));
          expect(verifyConsistency(from, to, fromRoot, toRoot, altered)).toBe(false);
        }
        if (from < to) expect(verifyConsistency(from, to, flip(fromRoot), toRoot, proof)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});

describe('tree sizes past 2^31', () => {
  // A tree whose first 2^40 leaves are all equal has one hash per level there, so its stored nodes
  // can be computed without 2^40 leaves; the last few leaves differ.
  const uniformSpan = 2 ** 40;
  const uniformLeaf = leafHash(Buffer.from('same'));
  const uniformLevels: Hash[] = [uniformLeaf];
  for (let level = 1; level <= 40; level += 1) {
    const below = uniformLevels[level - 1] as Hash;
    uniformLevels.push(nodeHash(below, below));
  }
  const tail = [0, 1, 2, 3, 4].map((i) => leafHash(Buffer.from(`tail ${i}`)));
  const size = uniformSpan + tail.length;
  const tailNodes = new Map<string, Hash>();
  for (const node of appendLeaves(0, tail, mapLookup(new Map()))) tailNodes.set(nodeKey(node), node.hash);
  const lookup: NodeLookup = ({ level, index }) => {
    const start = index * 2 ** level;
    if (start < uniformSpan) return uniformLevels[level] as Hash;
    const shifted = tailNodes.get(nodeKey({ level, index: (start - uniformSpan) / 2 ** level }));
    if (!shifted) throw new Error('not stored');
    return shifted;
  };

  it('proves inclusion of leaves on both sides of 2^31 and 2^32 in a tree of 2^40 + 5', () => {
    const root = rootFromNodes(size, lookup);
    expect(root).toEqual(nodeHash(uniformLevels[40] as Hash, referenceRoot(tail)));
    for (const index of [0, 2 ** 31 - 1, 2 ** 31, 2 ** 32 + 7, uniformSpan - 1]) {
      const proof = inclusionProofFromNodes(index, size, lookup);
      expect(proof).toHaveLength(41);
      expect(verifyInclusion(index, size, uniformLeaf, proof, root)).toBe(true);
      expect(
        verifyInclusion(
          index,
          size,
          uniformLeaf,
          proof.map((hash, i) => (i === 40 ? flip(hash) : hash)),
          root,
        ),
      ).toBe(false);
    }
    const last = size - 1;
    const proof = inclusionProofFromNodes(last, size, lookup);
    expect(verifyInclusion(last, size, tail[4] as Hash, proof, root)).toBe(true);
    expect(verifyInclusion(last - 1, size, tail[4] as Hash, proof, root)).toBe(false);
  });

  it('proves consistency from 2^31 + 1 leaves to 2^40 + 5', () => {
    const from = 2 ** 31 + 1;
    const fromRoot = rootFromNodes(from, lookup);
    const toRoot = rootFromNodes(size, lookup);
    const proof = consistencyProofFromNodes(from, size, lookup);
    expect(verifyConsistency(from, size, fromRoot, toRoot, proof)).toBe(true);
    expect(verifyConsistency(from, size, fromRoot, flip(toRoot), proof)).toBe(false);
  });
});
