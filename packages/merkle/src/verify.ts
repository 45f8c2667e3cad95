import { emptyRootHash, type Hash, hashSize, nodeHash } from './hashing.ts';

const isHash = (value: Uint8Array) => value.length === hashSize;
const isOdd = (n: number) => n % 2 === 1;
const half = (n: number) => Math.floor(n / 2);

/**
 * The root an inclusion proof leads to (RFC 9162 section 2.1.3.2), or undefined when the proof
 * cannot belong to that index and size.
 */
export function rootFromInclusionProof(
  index: number,
  size: number,
  leaf: Uint8Array,
  proof: readonly Uint8Array[],
): Hash | undefined {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return undefined;
  if (!isHash(leaf) || !proof.every(isHash)) return undefined;
  let fn = index;
  let sn = size - 1;
  let r: Hash = Buffer.from(leaf);
  for (const p of proof) {
    if (sn === 0) return undefined;
    if (isOdd(fn) || fn === sn) {
      r = nodeHash(p, r);
      if (!isOdd(fn)) {
        while (!isOdd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 ? r : undefined;
}

export function verifyInclusion(
  index: number,
  size: number,
  leaf: Uint8Array,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  const computed = rootFromInclusionProof(index, size, leaf, proof);
  return computed !== undefined && isHash(root) && computed.equals(root);
}

/** RFC 9162 section 2.1.4.2: the tree of size `to` with `toRoot` extends the one of size `from` with `fromRoot`. */
export function verifyConsistency(
  from: number,
  to: number,
  fromRoot: Uint8Array,
  toRoot: Uint8Array,
  proof: readonly Uint8Array[],
): boolean {
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 0 || from > to) return false;
  // Both roots are hashes whatever the sizes: two empty byte strings were "equal roots" of a tree of 3.
  if (!isHash(fromRoot) || !isHash(toRoot) || !proof.every(isHash)) return false;
  if (from === to) return proof.length === 0 && Buffer.from(fromRoot).equals(Buffer.from(toRoot));
  // Every tree extends the empty one, whose root is the hash of nothing (not any root one is given).
  if (from === 0) return proof.length === 0 && Buffer.from(fromRoot).equals(emptyRootHash);
  if (proof.length === 0) return false;

  const path = isPowerOfTwo(from) ? [fromRoot, ...proof] : [...proof];
  let fn = from - 1;
  let sn = to - 1;
  while (isOdd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  let fr: Hash = Buffer.from(path[0] as Uint8Array);
  let sr: Hash = fr;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (isOdd(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (!isOdd(fn)) {
        while (!isOdd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && fr.equals(Buffer.from(fromRoot)) && sr.equals(Buffer.from(toRoot));
}

function isPowerOfTwo(n: number): boolean {
  let x = n;
  while (x > 1 && x % 2 === 0) x /= 2;
  return x === 1;
}
