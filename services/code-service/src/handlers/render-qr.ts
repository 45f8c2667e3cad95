import { HallmarkError } from '@hallmark/contracts';
import { parseDigitalLink } from '@hallmark/gs1';
import QRCode from 'qrcode';
import type { QrRenderers } from './qr-renderers.ts';

export interface QrRequest {
  url: string;
  format: 'svg' | 'png';
  /** Width in pixels; or `mm` and `dpi` for print. */
  size?: number | undefined;
  mm?: number | undefined;
  dpi?: number | undefined;
  /** The asking account: its PNGs wait in its share of the renderers' queue. */
  owner?: string | undefined;
}

/** The print recommendations of the spec (Limits 6): error correction M, a quiet zone of 4 modules. */
const qrOptions = { errorCorrectionLevel: 'M', margin: 4 } as const;

/** The fewest pixels a module of a PNG is drawn with: fewer, and a reader cannot tell modules apart. */
export const minPixelsPerModule = 2;

/** A side of the largest QR code (version 40, 177 modules) with its quiet zone. */
const largestQrModules = 177 + 2 * qrOptions.margin;

/** The widest QR image drawn, in pixels a side, whether asked by `size` or by `mm` and `dpi`. */
export const maxQrPixels = 4096;

/** The image's width in pixels: `mm` at `dpi` (default 300) when `mm` is given, else `size` (default 300). */
export function qrPixelWidth(request: Pick<QrRequest, 'size' | 'mm' | 'dpi'>): number {
  return request.mm !== undefined ? Math.round((request.mm / 25.4) * (request.dpi ?? 300)) : (request.size ?? 300);
}

/**
 * A QR image of a code. With `mm` and `dpi` a PNG is exactly that size when printed at that
 * resolution (its pHYs chunk records the DPI); 25 mm at 300 DPI is 295 pixels. PNGs are drawn on
 * the renderers' threads. Fails with VALIDATION_ERROR beyond `maxQrPixels` a side (before any
 * drawing) or below `minPixelsPerModule` a module, and with SERVICE_UNAVAILABLE when the renderers'
 * queue is full.
 */
export async function renderQr(
  request: QrRequest,
  renderers: QrRenderers,
): Promise<{ contentType: string; body: string; encoding: 'utf8' | 'base64' }> {
  const width = qrPixelWidth(request);
  // What a size refusal names: the field asked with, and how many pixels that made.
  const field = request.mm !== undefined ? 'mm' : 'size';
  const asked = request.mm !== undefined ? `${request.mm} mm at ${request.dpi ?? 300} dpi is ${width} pixels` : `${width} pixels`;
  if (width > maxQrPixels) {
    throw new HallmarkError(
      'VALIDATION_ERROR',
      `Invalid request: a QR image is at most ${maxQrPixels} pixels a side; ${asked}.`,
      {
        fields: [{ field, in: 'querystring', message: `mm × dpi / 25.4 (or size) must be at most ${maxQrPixels} pixels` }],
        maxPixels: maxQrPixels,
        pixels: width,
      },
    );
  }
  const parsed = parseDigitalLink(request.url);
  if (!parsed.ok) throw new HallmarkError(parsed.problem.code, parsed.problem.message, parsed.problem.details);
  const text = request.url.trim();
  // Too few pixels for the code's modules: the QR library then drew 4 pixels a module, an image of
  // another size than asked (10 mm at 72 dpi printed 80 mm wide), or uneven ones no reader could
  // tell apart (64 pixels for 65 modules): refused instead (a review of 2026-12-05). The code is
  // encoded here only for a width that the largest one (version 40) could make too small.
  if (request.format === 'png' && width < minPixelsPerModule * largestQrModules) {
    const modules =
      QRCode.create(text, { errorCorrectionLevel: qrOptions.errorCorrectionLevel }).modules.size + 2 * qrOptions.margin;
    const minPixels = minPixelsPerModule * modules;
    if (width < minPixels) {
      throw new HallmarkError(
        'VALIDATION_ERROR',
        `Invalid request: this code's QR is ${modules} modules a side with its quiet zone, and a PNG needs ${minPixelsPerModule} pixels a module, at least ${minPixels} pixels; ${asked}.`,
        {
          fields: [
            {
              field,
              in: 'querystring',
              message: `must give at least ${minPixels} pixels for this code (${minPixelsPerModule} a module)`,
            },
          ],
          minPixels,
          pixels: width,
        },
      );
    }
  }
  if (request.format === 'svg') {
    // An SVG's cost does not grow with its width (one path, scaled by the viewer): drawn here.
    const svg = await QRCode.toString(text, { ...qrOptions, type: 'svg', ...(request.size ? { width: request.size } : {}) });
    return { contentType: 'image/svg+xml', body: svg, encoding: 'utf8' };
  }
  const png = await renderers.renderPng({ text, options: { ...qrOptions, type: 'png', width } }, request.owner);
  const withDpi = request.mm !== undefined || request.dpi !== undefined ? withPhysicalDpi(png, request.dpi ?? 300) : png;
  return { contentType: 'image/png', body: withDpi.toString('base64'), encoding: 'base64' };
}

/** Inserts a pHYs chunk (pixels per metre, both axes) right after IHDR. */
export function withPhysicalDpi(png: Buffer, dpi: number): Buffer {
  const pixelsPerMetre = Math.round(dpi / 0.0254);
  const data = Buffer.alloc(9);
  data.writeUInt32BE(pixelsPerMetre, 0);
  data.writeUInt32BE(pixelsPerMetre, 4);
  data.writeUInt8(1, 8); // unit: metre
  const type = Buffer.from('pHYs', 'ascii');
  const chunk = Buffer.alloc(12 + data.length);
  chunk.writeUInt32BE(data.length, 0);
  type.copy(chunk, 4);
  data.copy(chunk, 8);
  chunk.writeUInt32BE(crc32(Buffer.concat([type, data])), 8 + data.length);
  const ihdrEnd = 8 + 12 + png.readUInt32BE(8); // signature, then IHDR's length, type, data and CRC
  return Buffer.concat([png.subarray(0, ihdrEnd), chunk, png.subarray(ihdrEnd)]);
}

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = (crcTable[(crc ^ byte) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
