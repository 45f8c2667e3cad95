import { createHash } from 'node:crypto';

/** Hash values are 32-byte SHA-256 digests (RFC 9162 with SHA-256, as in RFC 6962). */
export type Hash = Buffer;

export const hashSize = 32;

const leafPrefix = Buffer.from([0x00]);
const nodePrefix = Buffer.from([0x01]);

/** MTH of a one-leaf list: SHA-256(0x00 || leaf input). */
export function leafHash(input: Uint8Array): Hash {
  return createHash('sha256').update(leafPrefix).update(input).digest();
}

/** Interior node: SHA-256(0x01 || left || right). */
export function nodeHash(left: Uint8Array, right: Uint8Array): Hash {
  return createHash('sha256').update(nodePrefix).update(left).update(right).digest();
}

/** MTH of the empty list: SHA-256 of nothing. */
export const emptyRootHash: Hash = createHash('sha256').digest();
