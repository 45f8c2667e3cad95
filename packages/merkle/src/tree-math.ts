/**
 * Index arithmetic for RFC 9162 trees, in plain numbers (never 32-bit bit operators), so sizes up
 * to Number.MAX_SAFE_INTEGER work.
 *
 * A tree is stored as its perfect subtrees: the node at (level, index) is MTH(D[index·2^level :
 * (index+1)·2^level]); level 0 holds the leaf hashes. Every hash RFC 9162 asks for, a root, an
 * audit path entry or a consistency proof entry, is MTH of a range D[start:end] whose `start` is a
 * multiple of the largest power of two below its length, so it is a right fold of at most
 * log2(n) stored perfect nodes: `perfectNodesOf` lists them.
 */

export interface NodeAddress {
  level: number;
  index: number;
}

/** A contiguous range of leaves, [start, end). */
export interface LeafRange {
  start: number;
  end: number;
}

export function assertTreeSize(size: number, name = 'tree size'): void {
  if (!Number.isSafeInteger(size) || size < 0) throw new RangeError(`${name} must be a non-negative safe integer`);
}

/** The largest power of two strictly below n (n ≥ 2): RFC 9162's split point k. */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** The stored perfect subtrees that make up the range, left to right, in descending size. */
export function perfectNodesOf(range: LeafRange): NodeAddress[] {
  const nodes: NodeAddress[] = [];
  let start = range.start;
  let remaining = range.end - range.start;
  while (remaining > 0) {
    let size = 1;
    let level = 0;
    while (size * 2 <= remaining) {
      size *= 2;
      level += 1;
    }
    nodes.push({ level, index: start / size });
    start += size;
    remaining -= size;
  }
  return nodes;
}

/**
 * The ranges whose hashes form the audit path PATH(index, D[size]), in proof order (nearest the
 * leaf first), per RFC 9162 section 2.1.3.1.
 */
export function inclusionRanges(index: number, size: number): LeafRange[] {
  assertTreeSize(size);
  if (!Number.isSafeInteger(index) || index < 0 || index >= size) throw new RangeError('leaf index must be below the tree size');
  const outerFirst: LeafRange[] = [];
  let start = 0;
  let end = size;
  while (end - start > 1) {
    const k = splitPoint(end - start);
    if (index < start + k) {
      outerFirst.push({ start: start + k, end });
      end = start + k;
    } else {
      outerFirst.push({ start, end: start + k });
      start += k;
    }
  }
  return outerFirst.reverse();
}

/**
 * The ranges whose hashes form the consistency proof PROOF(from, D[to]), in proof order, per
 * RFC 9162 section 2.1.4.1. Empty when from is 0 or equals to.
 */
export function consistencyRanges(from: number, to: number): LeafRange[] {
  assertTreeSize(from, 'from');
  assertTreeSize(to, 'to');
  if (from > to) throw new RangeError('from must not exceed to');
  if (from === 0 || from === to) return [];
  const outerFirst: LeafRange[] = [];
  let start = 0;
  let end = to;
  let m = from;
  let complete = true;
  while (m !== end - start) {
    const k = splitPoint(end - start);
    if (m <= k) {
      outerFirst.push({ start: start + k, end });
      end = start + k;
    } else {
      outerFirst.push({ start, end: start + k });
      start += k;
      m -= k;
      complete = false;
    }
  }
  if (!complete) outerFirst.push({ start, end });
  return outerFirst.reverse();
}

/**
 * The perfect nodes completed by appending leaves [size, size + count) to a tree of `size` leaves,
 * bottom-up per leaf: each entry's children are already stored or listed before it.
 */
export function nodesCompletedByAppend(size: number, count: number): NodeAddress[] {
  const nodes: NodeAddress[] = [];
  for (let leaf = size; leaf < size + count; leaf += 1) {
    let width = 2;
    let level = 1;
    while ((leaf + 1) % width === 0) {
      nodes.push({ level, index: (leaf + 1) / width - 1 });
      width *= 2;
      level += 1;
    }
  }
  return nodes;
}
