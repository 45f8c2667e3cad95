/**
 * Whether a photo is a picture already bound at another angle of the same object: its 64-bit
 * perceptual hash (the dHash of photo-analysis.ts) against theirs. No I/O; the rule of
 * docs/AUCTION.md, "One picture, one angle".
 */

/**
 * Hashes at most this many bits apart (of 64) are one picture. In our tests the same file, JPEG
 * re-encodings down to quality 40, resizes from 100 to 640 pixels and PNG or WebP conversions came
 * 0 to 6 bits from the original, different pictures 13 bits and more. A featureless photo (a plain
 * surface) hashes near zero and so matches another featureless one.
 */
export const sameImageMaxDistance = 10;

/** The number of bits in which two 64-bit hashes (16 hex digits) differ. Throws on anything else. */
export function hammingDistance(a: string, b: string): number {
  if (!/^[0-9a-f]{16}$/.test(a) || !/^[0-9a-f]{16}$/.test(b)) {
    throw new RangeError('A perceptual hash is 16 lower-case hex digits.');
  }
  let difference = BigInt(`0x${a}`) ^ BigInt(`0x${b}`);
  let bits = 0;
  while (difference > 0n) {
    bits += Number(difference & 1n);
    difference >>= 1n;
  }
  return bits;
}

export interface SimilarPhoto {
  /** The other angle whose photo is the same picture. */
  angle: string;
  /** Bits between the two hashes (at most `sameImageMaxDistance`). */
  distance: number;
}

/**
 * The closest photo bound at another angle whose hash is at most `sameImageMaxDistance` bits from
 * `perceptualHash`, or undefined. The photo being replaced at `angle` itself is not compared: a new
 * photo for an angle replaces the old one.
 */
export function findSameImage(
  perceptualHash: string,
  angle: string,
  bound: Iterable<[string, { perceptualHash: string }]>,
): SimilarPhoto | undefined {
  let closest: SimilarPhoto | undefined;
  for (const [otherAngle, photo] of bound) {
    if (otherAngle === angle) continue;
    const distance = hammingDistance(perceptualHash, photo.perceptualHash);
    if (distance <= sameImageMaxDistance && (!closest || distance < closest.distance)) closest = { angle: otherAngle, distance };
  }
  return closest;
}
