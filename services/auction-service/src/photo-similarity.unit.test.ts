import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { picture } from '../../../test/support/pictures.ts';
import { analysePhoto } from './photo-analysis.ts';
import { findSameImage, hammingDistance, sameImageMaxDistance } from './photo-similarity.ts';

const photos = (entries: Record<string, string>) =>
  Object.entries(entries).map(([angle, hash]) => [angle, { perceptualHash: hash }] as [string, { perceptualHash: string }]);

describe('hammingDistance', () => {
  it('counts the differing bits of two 64-bit hashes', () => {
    expect(hammingDistance('0000000000000000', '0000000000000000')).toBe(0);
    expect(hammingDistance('0000000000000000', 'ffffffffffffffff')).toBe(64);
    expect(hammingDistance('8000000000000001', '0000000000000000')).toBe(2);
    expect(hammingDistance('0f0f0f0f0f0f0f0f', 'f0f0f0f0f0f0f0f0')).toBe(64);
    expect(hammingDistance('0c0c130c3cb03007', '0c0c130c3cb03006')).toBe(1);
  });

  it('refuses what is not a 64-bit hash in hex', () => {
    expect(() => hammingDistance('abc', '0000000000000000')).toThrow(RangeError);
    expect(() => hammingDistance('000000000000000g', '0000000000000000')).toThrow(RangeError);
    expect(() => hammingDistance('0000000000000000', '00000000000000000')).toThrow(RangeError);
  });
});

describe('findSameImage', () => {
  const dial = '0c0c130c3cb03007';
  it('finds an identical hash at another angle', () => {
    expect(findSameImage(dial, 'movement', photos({ dial }))).toEqual({ angle: 'dial', distance: 0 });
  });

  it('does not compare with the photo the upload replaces at its own angle', () => {
    expect(findSameImage(dial, 'dial', photos({ dial }))).toBeUndefined();
  });

  it(`takes up to ${sameImageMaxDistance} bits as the same picture, and no more`, () => {
    // Flip the lowest n bits of the hash.
    const flipped = (n: number) => (BigInt(`0x${dial}`) ^ ((1n << BigInt(n)) - 1n)).toString(16).padStart(16, '0');
    expect(hammingDistance(dial, flipped(sameImageMaxDistance))).toBe(sameImageMaxDistance);
    expect(findSameImage(flipped(sameImageMaxDistance), 'movement', photos({ dial }))).toEqual({
      angle: 'dial',
      distance: sameImageMaxDistance,
    });
    expect(findSameImage(flipped(sameImageMaxDistance + 1), 'movement', photos({ dial }))).toBeUndefined();
  });

  it('names the closest of several matches', () => {
    const near = 'ffffffffffffffff';
    const closer = 'fffffffffffffffe';
    expect(findSameImage(near, 'case_back', photos({ dial: closer, movement: near }))).toEqual({
      angle: 'movement',
      distance: 0,
    });
    expect(findSameImage('0fffffffffffffff', 'case_back', photos({ dial: near, movement: closer }))).toEqual({
      angle: 'dial',
      distance: 4,
    });
  });

  it('finds nothing among different pictures', () => {
    expect(findSameImage(dial, 'case_back', photos({ dial: '20909088631c5c1c', movement: 'c8c0c4c4e4646010' }))).toBeUndefined();
    expect(findSameImage(dial, 'dial', [])).toBeUndefined();
  });
});

const hashOf = async (bytes: Buffer) => {
  const analysed = await analysePhoto(bytes);
  if (!analysed.ok) throw new Error(analysed.problem);
  return analysed.analysis.perceptualHash;
};

describe('the threshold against real encodings', () => {
  it('re-encoded, resized and converted copies stay within it; different pictures stay outside', async () => {
    for (const seed of [1, 2, 3, 4]) {
      const original = await picture(seed);
      const hash = await hashOf(original);
      for (const copy of [
        await sharp(original).jpeg({ quality: 40 }).toBuffer(),
        await sharp(original).resize(200).jpeg({ quality: 55 }).toBuffer(),
        await sharp(original).resize(640).png().toBuffer(),
        await sharp(original).resize(100).webp({ quality: 50 }).toBuffer(),
      ]) {
        expect(hammingDistance(hash, await hashOf(copy))).toBeLessThanOrEqual(sameImageMaxDistance);
      }
    }
    const hashes = await Promise.all(Array.from({ length: 12 }, (_, i) => picture(i + 1).then(hashOf)));
    for (const [i, a] of hashes.entries()) {
      for (const b of hashes.slice(i + 1)) expect(hammingDistance(a, b)).toBeGreaterThan(sameImageMaxDistance);
    }
  });
});
