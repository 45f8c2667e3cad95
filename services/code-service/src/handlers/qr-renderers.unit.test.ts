import { HallmarkError } from '@hallmark/contracts';
import { afterEach, describe, expect, it } from 'vitest';
import { createQrRenderers, type QrPngJob, type QrRenderers } from './qr-renderers.ts';
import { maxQrPixels, qrPixelWidth, renderQr } from './render-qr.ts';

const job = (width: number): QrPngJob => ({
  text: 'https://example.com/01/09506000134352/21/SN-1?sig=abc',
  options: { errorCorrectionLevel: 'M', margin: 4, type: 'png', width },
});

let renderers: QrRenderers | undefined;
afterEach(async () => {
  await renderers?.close();
  renderers = undefined;
});

describe('qrPixelWidth', () => {
  it('is mm at dpi (300 by default) when mm is given, else size (300 by default)', () => {
    expect(qrPixelWidth({ mm: 25, dpi: 300 })).toBe(295);
    expect(qrPixelWidth({ mm: 25 })).toBe(295);
    expect(qrPixelWidth({ mm: 173, dpi: 600 })).toBe(4087);
    expect(qrPixelWidth({ mm: 500, dpi: 1200 })).toBe(23622);
    expect(qrPixelWidth({ size: 512, dpi: 1200 })).toBe(512);
    expect(qrPixelWidth({})).toBe(300);
  });
});

describe('renderQr', () => {
  it(`refuses more than ${maxQrPixels} pixels a side before drawing anything`, async () => {
    renderers = createQrRenderers({ threads: 1, maxWaiting: 0, maxWaitingPixels: 0 });
    const refused = await renderQr({ url: 'not even a link', format: 'png', mm: 500, dpi: 1200 }, renderers).catch((e) => e);
    expect(refused).toBeInstanceOf(HallmarkError);
    expect(refused).toMatchObject({ code: 'VALIDATION_ERROR', details: { maxPixels: 4096, pixels: 23622 } });
    expect((refused as Error).message).toContain('4096');
  });
});

describe('QR renderers', () => {
  it('draws PNGs on a thread, refuses beyond the queue with 503 and a retry delay, and serves again after', async () => {
    renderers = createQrRenderers({ threads: 1, maxWaiting: 1, maxWaitingPixels: 2048 * 2048 });
    const running = renderers.renderPng(job(2048));
    const waiting = renderers.renderPng(job(2048));
    const refused = await renderers.renderPng(job(300)).catch((e) => e);
    expect(refused).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { retryAfterSeconds: 1 } });
    for (const png of await Promise.all([running, waiting])) expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect((await renderers.renderPng(job(300))).subarray(1, 4).toString()).toBe('PNG');
  });

  it('keeps an owner to half the queue, and gives a freed thread to an owner with none running first', async () => {
    renderers = createQrRenderers({ threads: 1, maxWaiting: 4, maxWaitingPixels: 2 * 2048 * 2048 });
    const done: string[] = [];
    const draw = (owner: string, width: number, name: string) =>
      (renderers as QrRenderers).renderPng(job(width), owner).then((png) => {
        done.push(name);
        return png;
      });
    const running = draw('flood', 2048, 'flood-1');
    const queued = draw('flood', 2048, 'flood-2');
    // The flood's half of the queue is taken: its next render is refused, another owner's is not.
    expect(await draw('flood', 2048, 'flood-3').catch((e) => e)).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    const neighbour = draw('neighbour', 300, 'neighbour-1');
    await Promise.all([running, queued, neighbour]);
    expect(done).toEqual(['flood-1', 'neighbour-1', 'flood-2']);
  });

  it('fails what is queued when closed, and refuses new work', async () => {
    renderers = createQrRenderers({ threads: 1, maxWaiting: 4, maxWaitingPixels: 4 * 2048 * 2048 });
    const running = renderers.renderPng(job(2048)).catch((e) => e);
    const queued = renderers.renderPng(job(2048)).catch((e) => e);
    await renderers.close();
    expect(await queued).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(await running).toBeInstanceOf(HallmarkError);
    expect(await renderers.renderPng(job(300)).catch((e) => e)).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
  });
});
