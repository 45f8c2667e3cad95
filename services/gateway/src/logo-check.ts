import { createHash } from 'node:crypto';
import { HallmarkError } from '@hallmark/contracts';
import sharp from 'sharp';

/**
 * A brand's logo upload (PUT /account/branding/logo; docs/RESOLVER.md, "The brand"), checked like
 * the auction photos and then some, because it is shown to shoppers on our own origin:
 *
 * - only `image/png` or `image/jpeg` (SVG can carry script; anything else is 415 before this runs);
 * - at most {@link maxLogoBytes} (the route's body limit, 413);
 * - the bytes must be the declared format, and its container well formed with nothing after its
 *   end (PNG `IEND`, JPEG `EOI`): a file that is also an HTML page, a script or an archive (a
 *   polyglot) is refused, as is markup in its metadata chunks or segments;
 * - decoded by sharp (libvips) within {@link maxLogoSide} pixels a side, read from the header before
 *   any pixel is unpacked (and `limitInputPixels`), at least {@link minLogoSide};
 * - stored and served re-encoded: a PNG of the decoded pixels at most {@link storedLogoSide} a side,
 *   no metadata, so what the page loads is never the uploaded bytes.
 */
export const maxLogoBytes = 524_288;
export const maxLogoSide = 2048;
export const minLogoSide = 16;
export const storedLogoSide = 256;

export interface CheckedLogo {
  png: Buffer;
  sha256: string;
  width: number;
  height: number;
}

const pngSignature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** Markup a browser could run or render if the file were ever taken for something else. */
const markup = /<\s*(script|html|svg|body|iframe|object|embed|\?xml|!doctype)|javascript:/i;

const refuse = (message: string, reason: string) =>
  new HallmarkError('VALIDATION_ERROR', `Invalid logo: ${message}`, {
    fields: [{ field: 'body', in: 'body', message: reason }],
  });

/** The PNG's chunks are whole, IHDR first, IEND last with nothing after it, and no markup outside the pixel data. */
function checkPngContainer(bytes: Buffer): void {
  if (!bytes.subarray(0, 8).equals(pngSignature)) throw refuse('the bytes are not a PNG.', 'is not a PNG file');
  let at = 8;
  let first = true;
  while (at + 12 <= bytes.length) {
    const length = bytes.readUInt32BE(at);
    const type = bytes.toString('latin1', at + 4, at + 8);
    const end = at + 12 + length;
    if (end > bytes.length) throw refuse('the PNG is cut short.', 'has a chunk running past the end of the file');
    if (first && type !== 'IHDR') throw refuse('the PNG does not start with its header.', 'does not start with IHDR');
    first = false;
    if (type !== 'IDAT' && markup.test(bytes.toString('latin1', at + 8, at + 8 + length))) {
      throw refuse(`the PNG carries markup in its ${type} chunk.`, 'carries markup (HTML, SVG or script) in its metadata');
    }
    at = end;
    if (type === 'IEND') {
      if (at !== bytes.length) {
        throw refuse(
          `${bytes.length - at} bytes follow the end of the PNG (a file that is two things at once).`,
          'has data after IEND',
        );
      }
      return;
    }
  }
  throw refuse('the PNG has no end (IEND).', 'has no IEND chunk');
}

/** Markers with no length field: SOI, EOI, RSTn, TEM. */
const standalone = (marker: number) =>
  marker === 0xd8 || marker === 0xd9 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x01;

/** The JPEG's segments are whole, it ends at EOI with nothing after it, and no markup in its APPn or COM segments. */
function checkJpegContainer(bytes: Buffer): void {
  if (bytes.length < 4 || bytes[0] !== 0xff || bytes[1] !== 0xd8) throw refuse('the bytes are not a JPEG.', 'is not a JPEG file');
  let at = 2;
  while (at < bytes.length) {
    if (bytes[at] !== 0xff) throw refuse('the JPEG is malformed.', 'has data where a segment should start');
    while (bytes[at] === 0xff && at < bytes.length) at += 1; // fill bytes
    const marker = bytes[at] as number;
    at += 1;
    if (marker === 0xd9) {
      if (at !== bytes.length) {
        throw refuse(
          `${bytes.length - at} bytes follow the end of the JPEG (a file that is two things at once).`,
          'has data after EOI',
        );
      }
      return;
    }
    if (standalone(marker)) continue;
    if (at + 2 > bytes.length) break;
    const length = bytes.readUInt16BE(at);
    const end = at + length;
    if (length < 2 || end > bytes.length)
      throw refuse('the JPEG is cut short.', 'has a segment running past the end of the file');
    if (((marker >= 0xe0 && marker <= 0xef) || marker === 0xfe) && markup.test(bytes.toString('latin1', at + 2, end))) {
      throw refuse('the JPEG carries markup in its metadata.', 'carries markup (HTML, SVG or script) in its metadata');
    }
    at = end;
    if (marker === 0xda) {
      // Entropy-coded data up to the next marker that is not a stuffed 0xFF00 or a restart marker.
      while (
        at + 1 < bytes.length &&
        !(
          bytes[at] === 0xff &&
          bytes[at + 1] !== 0x00 &&
          !((bytes[at + 1] as number) >= 0xd0 && (bytes[at + 1] as number) <= 0xd7)
        )
      ) {
        at += 1;
      }
      if (at + 1 >= bytes.length) break;
    }
  }
  throw refuse('the JPEG has no end (EOI).', 'has no EOI marker');
}

/** Checks an upload declared as `declaredType` and answers the PNG to store, or throws the 400 saying why. */
export async function checkLogo(bytes: Buffer, declaredType: 'image/png' | 'image/jpeg'): Promise<CheckedLogo> {
  if (bytes.length === 0) throw refuse('the body is empty.', 'is empty');
  if (declaredType === 'image/png') checkPngContainer(bytes);
  else checkJpegContainer(bytes);
  let metadata: sharp.Metadata;
  try {
    metadata = await sharp(bytes, { failOn: 'error' }).metadata();
  } catch {
    throw refuse('the image cannot be decoded.', 'is not a decodable image');
  }
  const format = metadata.format === 'jpeg' ? 'image/jpeg' : metadata.format === 'png' ? 'image/png' : metadata.format;
  if (format !== declaredType) {
    throw refuse(
      `it was sent as ${declaredType} but is ${metadata.format ?? 'not an image'}.`,
      'does not match its Content-Type',
    );
  }
  const width = metadata.width ?? 0;
  const height = metadata.height ?? 0;
  if (width > maxLogoSide || height > maxLogoSide) {
    throw refuse(`the image is ${width}×${height}; logos are at most ${maxLogoSide} pixels a side.`, 'is too large in pixels');
  }
  if (width < minLogoSide || height < minLogoSide) {
    throw refuse(`the image is ${width}×${height}; logos are at least ${minLogoSide} pixels a side.`, 'is too small in pixels');
  }
  let png: Buffer;
  let info: sharp.OutputInfo;
  try {
    ({ data: png, info } = await sharp(bytes, { failOn: 'error', limitInputPixels: maxLogoSide * maxLogoSide })
      .rotate()
      .resize({ width: storedLogoSide, height: storedLogoSide, fit: 'inside', withoutEnlargement: true })
      .png({ compressionLevel: 9 })
      .toBuffer({ resolveWithObject: true }));
  } catch {
    throw refuse('the image could not be decoded completely.', 'is not a decodable image');
  }
  return { png, sha256: createHash('sha256').update(png).digest('hex'), width: info.width, height: info.height };
}
