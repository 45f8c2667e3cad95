import fc from 'fast-check';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { analysePhoto, maxPhotoPixels } from './photo-analysis.ts';

/** A picture with structure in some places and flat elsewhere, like a dial on a plain background. */
async function texturedPng(seed: number, side = 256, layout = 0): Promise<Buffer> {
  const pixels = Buffer.alloc(side * side * 3, 200);
  let state = seed;
  const random = () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
  for (let y = 0; y < side; y += 1) {
    for (let x = 0; x < side; x += 1) {
      const [u, v] = layout === 0 ? [x, y] : [side - 1 - y, x];
      const inFeature =
        (u > side * 0.2 && u < side * 0.5 && v > side * 0.3 && v < side * 0.7) || (u > side * 0.7 && v < side * 0.2);
      if (inFeature) pixels.fill(Math.floor(random() * 255), (y * side + x) * 3, (y * side + x) * 3 + 3);
    }
  }
  return sharp(pixels, { raw: { width: side, height: side, channels: 3 } })
    .png()
    .toBuffer();
}

describe('photo analysis', () => {
  it('finds anchors in detailed areas and none in a flat picture', async () => {
    const textured = await analysePhoto(await texturedPng(1));
    expect(textured.ok).toBe(true);
    if (!textured.ok) return;
    expect(textured.analysis).toMatchObject({ format: 'png', width: 256, height: 256 });
    expect(textured.analysis.anchors).toBeGreaterThan(4);
    expect(textured.analysis.anchors).toBeLessThan(40);
    expect(textured.analysis.entropyBits).toBeGreaterThan(20);
    expect(textured.analysis.spatialRelations).toBe((textured.analysis.anchors * (textured.analysis.anchors - 1)) / 2);
    expect(textured.analysis.perceptualHash).toMatch(/^[0-9a-f]{16}$/);

    const flat = await analysePhoto(
      await sharp({ create: { width: 128, height: 128, channels: 3, background: '#777' } })
        .jpeg()
        .toBuffer(),
    );
    expect(flat).toMatchObject({ ok: true, analysis: { format: 'jpeg', anchors: 0, entropyBits: 0, spatialRelations: 0 } });
  });

  it('gives near pictures near hashes and different pictures different ones', async () => {
    const a = await analysePhoto(await texturedPng(1));
    const same = await analysePhoto(
      await sharp(await texturedPng(1))
        .jpeg({ quality: 80 })
        .toBuffer(),
    );
    const other = await analysePhoto(await texturedPng(99, 256, 1));
    if (!a.ok || !same.ok || !other.ok) throw new Error('analysis failed');
    const distance = (x: string, y: string) =>
      [...(BigInt(`0x${x}`) ^ BigInt(`0x${y}`)).toString(2)].filter((b) => b === '1').length;
    expect(distance(a.analysis.perceptualHash, same.analysis.perceptualHash)).toBeLessThanOrEqual(6);
    expect(distance(a.analysis.perceptualHash, other.analysis.perceptualHash)).toBeGreaterThan(6);
  });

  it('refuses what is not a real image, by content', async () => {
    expect(await analysePhoto(Buffer.from('GIF89a not really'))).toMatchObject({ ok: false });
    expect(await analysePhoto(Buffer.from('%PDF-1.7 a document'))).toMatchObject({ ok: false });
    const png = await texturedPng(3);
    expect(await analysePhoto(png.subarray(0, png.length / 2))).toMatchObject({ ok: false });
    const tiny = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#000' } })
      .png()
      .toBuffer();
    expect(await analysePhoto(tiny)).toMatchObject({ ok: false, problem: expect.stringMatching(/at least 64×64/) });
    const gif = await sharp({ create: { width: 100, height: 100, channels: 3, background: '#000' } })
      .gif()
      .toBuffer();
    expect(await analysePhoto(gif)).toMatchObject({ ok: false, problem: expect.stringMatching(/JPEG, PNG or WebP/) });
  });

  it(`refuses more than ${maxPhotoPixels / 1_000_000} megapixels from the header, without decoding them`, async () => {
    // 6,400 × 6,400 is 40.96 megapixels: a flat grey PNG of a few KB, 41 MB once decoded.
    const big = await sharp({ create: { width: 6_400, height: 6_400, channels: 3, background: '#777' } })
      .png({ compressionLevel: 9 })
      .toBuffer();
    const started = performance.now();
    expect(await analysePhoto(big)).toEqual({ ok: false, problem: 'The image is 6400×6400; photos are at most 40 megapixels.' });
    expect(performance.now() - started).toBeLessThan(500);
    // Just under the limit is analysed.
    const under = await sharp({ create: { width: 6_300, height: 6_300, channels: 3, background: '#777' } })
      .jpeg()
      .toBuffer();
    expect(await analysePhoto(under)).toMatchObject({ ok: true, analysis: { width: 6_300, height: 6_300 } });
  });
});

describe('photo analysis under hostile bytes', () => {
  // A reference photo is decoded on our servers, whoever uploads it: bytes mutated from real JPEG,
  // PNG and WebP files reach into the decoders, which random bytes alone would not. Each answer is
  // an analysis of a real picture or a refusal saying why, within 2 s; never a throw
  // (HALLMARK_PHOTO_RUNS, HALLMARK_PHOTO_SEED replay).
  const runs = Number(process.env.HALLMARK_PHOTO_RUNS ?? 300);
  const seed = Number(process.env.HALLMARK_PHOTO_SEED ?? Date.now() % 2 ** 31);

  it('answers mutated JPEGs, PNGs and WebPs with an analysis or a refusal', async () => {
    const picture = sharp(await texturedPng(7, 96));
    const originals = [
      await picture.clone().jpeg({ quality: 80 }).toBuffer(),
      await picture.clone().png().toBuffer(),
      await picture.clone().webp({ quality: 80 }).toBuffer(),
    ];
    for (const original of originals) expect((await analysePhoto(original)).ok).toBe(true);
    const edit = fc.oneof(
      fc.record({ kind: fc.constant('set' as const), at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }),
      fc.record({ kind: fc.constant('cut' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 64 }) }),
      fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: originals.length - 1 }),
        fc.array(edit, { minLength: 1, maxLength: 6 }),
        async (which, edits) => {
          let bytes = Buffer.from(originals[which] as Buffer);
          for (const change of edits) {
            const at = change.at % Math.max(1, bytes.length);
            if (change.kind === 'set') bytes[at] = change.value;
            else if (change.kind === 'cut') bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + change.length)]);
            else bytes = bytes.subarray(0, at);
          }
          const started = Date.now();
          const check = await analysePhoto(bytes);
          expect(Date.now() - started).toBeLessThan(2_000);
          if (!check.ok) {
            expect(check.problem.length).toBeGreaterThan(0);
            return;
          }
          const { analysis } = check;
          expect(['jpeg', 'png', 'webp']).toContain(analysis.format);
          expect(analysis.width * analysis.height).toBeLessThanOrEqual(maxPhotoPixels);
          expect(analysis.perceptualHash).toMatch(/^[0-9a-f]{16}$/);
          expect(Number.isFinite(analysis.entropyBits) && analysis.entropyBits >= 0).toBe(true);
          expect(analysis.anchors).toBeGreaterThanOrEqual(0);
          expect(analysis.anchors).toBeLessThanOrEqual(64);
        },
      ),
      { numRuns: runs, seed },
    );
  });
});
