import sharp from 'sharp';

/**
 * A picture with detail in a few places (like a dial on a plain ground), different per seed and the
 * same for the same seed: distinct pictures whose perceptual hashes are far apart, for photo tests.
 */
export async function picture(seed: number, options: { side?: number; format?: 'jpeg' | 'png' } = {}): Promise<Buffer> {
  const side = options.side ?? 320;
  const pixels = Buffer.alloc(side * side * 3, 180);
  let state = seed * 7919 + 1;
  const random = () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
  const boxes = Array.from({ length: 3 }, () => [random() * 0.7, random() * 0.7, 0.1 + random() * 0.2] as const);
  for (let y = 0; y < side; y += 1) {
    for (let x = 0; x < side; x += 1) {
      const inside = boxes.some(
        ([bx, by, size]) => x / side > bx && x / side < bx + size && y / side > by && y / side < by + size,
      );
      if (inside) pixels.fill(Math.floor(random() * 255), (y * side + x) * 3, (y * side + x) * 3 + 3);
    }
  }
  const image = sharp(pixels, { raw: { width: side, height: side, channels: 3 } });
  return (options.format === 'png' ? image.png() : image.jpeg({ quality: 90 })).toBuffer();
}
