import { deflateSync } from 'node:zlib';
import { HallmarkError } from '@hallmark/contracts';
import fc from 'fast-check';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkLogo, maxLogoSide, storedLogoSide } from './logo-check.ts';

// A brand's logo is decoded on our servers and shown to shoppers: whatever bytes a hostile tenant
// uploads, checkLogo answers a re-encoded PNG within the limits or a 400 VALIDATION_ERROR, at once.
// Bytes mutated from real PNGs and JPEGs reach past the container checks into the decoder, which
// random bytes alone would not (HALLMARK_LOGO_RUNS, HALLMARK_LOGO_SEED replay).

const runs = Number(process.env.HALLMARK_LOGO_RUNS ?? 500);
const seed = Number(process.env.HALLMARK_LOGO_SEED ?? Date.now() % 2 ** 31);
const perCallMs = 2_000;

let png: Buffer;
let jpeg: Buffer;
beforeAll(async () => {
  const pixels = sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 200, g: 30, b: 90 } } });
  png = await pixels.clone().png().toBuffer();
  jpeg = await pixels.clone().jpeg({ quality: 80 }).toBuffer();
});

/** The answer of checkLogo: the stored PNG's size, or the refusal's code; fails on anything else or after 2 s. */
async function outcome(bytes: Buffer, type: 'image/png' | 'image/jpeg'): Promise<string> {
  const started = Date.now();
  try {
    const checked = await checkLogo(bytes, type);
    const stored = await sharp(checked.png).metadata();
    expect(stored.format).toBe('png');
    expect(Math.max(stored.width ?? 0, stored.height ?? 0)).toBeLessThanOrEqual(storedLogoSide);
    expect([stored.width, stored.height]).toEqual([checked.width, checked.height]);
    return 'stored';
  } catch (error) {
    if (!(error instanceof HallmarkError)) throw new Error(`checkLogo threw something else: ${String(error)}`, { cause: error });
    expect(error.code).toBe('VALIDATION_ERROR');
    return error.code;
  } finally {
    expect(Date.now() - started).toBeLessThan(perCallMs);
  }
}

/** A PNG chunk with its length and CRC (PNG's CRC-32). */
function chunk(type: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/** A well-formed PNG whose header declares `width`×`height` but whose data is a few bytes: a pixel bomb. */
function declaredPng(width: number, height: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.alloc(1024))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** Mutations of a real file: bytes overwritten, a range cut out or repeated, the file cut short. */
const mutated = (original: () => Buffer) =>
  fc
    .array(
      fc.oneof(
        fc.record({ kind: fc.constant('set' as const), at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }),
        fc.record({ kind: fc.constant('cut' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 64 }) }),
        fc.record({ kind: fc.constant('repeat' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 256 }) }),
        fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
      ),
      { minLength: 1, maxLength: 6 },
    )
    .map((edits) => {
      let bytes = Buffer.from(original());
      for (const edit of edits) {
        const at = edit.at % Math.max(1, bytes.length);
        if (edit.kind === 'set') bytes[at] = edit.value;
        else if (edit.kind === 'cut') bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + edit.length)]);
        else if (edit.kind === 'repeat')
          bytes = Buffer.concat([
            bytes.subarray(0, at + edit.length),
            bytes.subarray(at, at + edit.length),
            bytes.subarray(at + edit.length),
          ]);
        else bytes = bytes.subarray(0, at);
      }
      return bytes;
    });

describe('checkLogo under hostile bytes', () => {
  it('stores the originals', async () => {
    expect(await outcome(png, 'image/png')).toBe('stored');
    expect(await outcome(jpeg, 'image/jpeg')).toBe('stored');
  });

  it('refuses every prefix of a real PNG and JPEG, each in its own 400', async () => {
    for (const [bytes, type] of [
      [png, 'image/png'],
      [jpeg, 'image/jpeg'],
    ] as const) {
      for (let length = 0; length < bytes.length; length += 1) {
        expect(await outcome(bytes.subarray(0, length), type), `${type} cut to ${length} bytes`).toBe('VALIDATION_ERROR');
      }
    }
  });

  it('refuses a header declaring more pixels than a logo may have, without unpacking them', async () => {
    for (const [width, height] of [
      [maxLogoSide + 1, 16],
      [100_000, 100_000],
      [2 ** 31 - 1, 2 ** 31 - 1],
      [0, 0],
    ]) {
      expect(await outcome(declaredPng(width as number, height as number), 'image/png'), `${width}×${height}`).toBe(
        'VALIDATION_ERROR',
      );
    }
  });

  it('answers mutated PNGs and JPEGs, sent as either type, with a stored PNG or a 400', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          mutated(() => png),
          mutated(() => jpeg),
        ),
        fc.constantFrom('image/png' as const, 'image/jpeg' as const),
        async (bytes, type) => {
          expect(['stored', 'VALIDATION_ERROR']).toContain(await outcome(bytes, type));
        },
      ),
      { numRuns: runs, seed },
    );
  });
});
