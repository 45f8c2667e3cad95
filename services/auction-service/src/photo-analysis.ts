import sharp from 'sharp';

export interface PhotoAnalysis {
  format: 'jpeg' | 'png' | 'webp';
  width: number;
  height: number;
  /** 64-bit difference hash (dHash), hex: near-identical pictures differ in few bits. */
  perceptualHash: string;
  /** High-detail tiles of the 8×8 grid: the photo's anchors. */
  anchors: number;
  /** log2 of the number of ways to place that many anchors on the grid: bits a forger must match. */
  entropyBits: number;
  /** Pairs of anchors, each a (distance, bearing) relation a match must reproduce. */
  spatialRelations: number;
}

export type PhotoCheck = { ok: true; analysis: PhotoAnalysis } | { ok: false; problem: string };

const acceptedFormats = new Set(['jpeg', 'png', 'webp']);
const minimumSide = 64;
/**
 * The most pixels a photo may have (40 megapixels: 7,300 × 5,480, beyond any phone or most
 * cameras). Checked on the header before anything is decoded, and given to libvips as
 * `limitInputPixels` too: a small file declaring a huge picture (a decompression bomb) is refused
 * without its pixels ever being unpacked.
 */
export const maxPhotoPixels = 40_000_000;
const grid = 8;
const tile = 8;

/** log2(C(n, k)), summed as logs so it stays exact enough for n = 64. */
function log2Binomial(n: number, k: number): number {
  let bits = 0;
  for (let i = 1; i <= k; i += 1) bits += Math.log2(n - k + i) - Math.log2(i);
  return bits;
}

/**
 * Decodes the bytes (so only a real image passes, whatever its name or declared type) and computes
 * what docs/AUCTION.md describes: a dHash, and the anchors of a 64×64 grey rendering, where a tile
 * is an anchor when its mean gradient is well above the picture's typical tile. A blank or
 * featureless photo has no anchors and adds no entropy.
 */
export async function analysePhoto(bytes: Buffer): Promise<PhotoCheck> {
  let metadata: sharp.Metadata;
  try {
    // The header only: the pixel count is checked below, with a message that says so.
    metadata = await sharp(bytes, { failOn: 'error' }).metadata();
  } catch {
    return { ok: false, problem: 'The file is not an image that can be decoded (JPEG, PNG or WebP).' };
  }
  if (!metadata.format || !acceptedFormats.has(metadata.format)) {
    return { ok: false, problem: `Images must be JPEG, PNG or WebP; this is ${metadata.format ?? 'unknown'}.` };
  }
  const width = metadata.width ?? 0;
  const height = metadata.height ?? 0;
  // sharp decodes the first frame only (pages: 1 by default), so one frame's pixels are what count.
  if (width * height > maxPhotoPixels) {
    return {
      ok: false,
      problem: `The image is ${width}×${height}; photos are at most ${maxPhotoPixels / 1_000_000} megapixels.`,
    };
  }
  if (width < minimumSide || height < minimumSide) {
    return {
      ok: false,
      problem: `The image is ${width}×${height}; reference photos are at least ${minimumSide}×${minimumSide}.`,
    };
  }
  let grey: Buffer;
  let small: Buffer;
  try {
    grey = await sharp(bytes, { limitInputPixels: maxPhotoPixels })
      .rotate()
      .greyscale()
      .resize(grid * tile, grid * tile, { fit: 'fill' })
      .raw()
      .toBuffer();
    small = await sharp(bytes, { limitInputPixels: maxPhotoPixels })
      .rotate()
      .greyscale()
      .resize(9, 8, { fit: 'fill' })
      .raw()
      .toBuffer();
  } catch {
    return { ok: false, problem: 'The image could not be decoded completely.' };
  }

  let hash = 0n;
  for (let y = 0; y < 8; y += 1) {
    for (let x = 0; x < 8; x += 1)
      hash = (hash << 1n) | ((small[y * 9 + x] as number) > (small[y * 9 + x + 1] as number) ? 1n : 0n);
  }

  const side = grid * tile;
  const pixel = (x: number, y: number) => grey[y * side + x] as number;
  const detail: number[] = [];
  for (let ty = 0; ty < grid; ty += 1) {
    for (let tx = 0; tx < grid; tx += 1) {
      let sum = 0;
      for (let y = ty * tile; y < (ty + 1) * tile; y += 1) {
        for (let x = tx * tile; x < (tx + 1) * tile; x += 1) {
          const right = x + 1 < side ? pixel(x + 1, y) : pixel(x, y);
          const down = y + 1 < side ? pixel(x, y + 1) : pixel(x, y);
          sum += Math.abs(right - pixel(x, y)) + Math.abs(down - pixel(x, y));
        }
      }
      detail.push(sum / (tile * tile));
    }
  }
  const median = [...detail].sort((a, b) => a - b)[detail.length / 2] as number;
  const threshold = Math.max(8, median * 1.5);
  const anchors = detail.filter((value) => value >= threshold).length;
  return {
    ok: true,
    analysis: {
      format: metadata.format as PhotoAnalysis['format'],
      width,
      height,
      perceptualHash: hash.toString(16).padStart(16, '0'),
      anchors,
      entropyBits: Math.floor(log2Binomial(grid * grid, anchors)),
      spatialRelations: anchors < 2 ? 0 : (anchors * (anchors - 1)) / 2,
    },
  };
}
