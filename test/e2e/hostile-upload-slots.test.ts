// Uploads a gateway holds in memory at once are bounded (issue #16, item 5): each photo is read into
// memory before it is stored, so a burst of large uploads from a script could exhaust the process.
// Beyond HALLMARK_UPLOADS_AT_ONCE running and as many waiting, the answer is 503 with Retry-After.
// In both forms: the bound is the gateway's, whichever form it runs in.
import { request } from 'node:http';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { call, startEmbeddedProduct } from '../support/embedded.ts';

const boundary = 'slotsboundary';
const settings = { HALLMARK_UPLOADS_AT_ONCE: '1' };

/** An upload whose body is sent only up to the file's first bytes and then held open, until `finish`. */
function heldUpload(target: string, key: string): { finish(rest: Buffer): Promise<number>; answered: Promise<number> } {
  const url = new URL(target);
  let resolveAnswer: (status: number) => void = () => {};
  const answered = new Promise<number>((resolve) => {
    resolveAnswer = resolve;
  });
  const outgoing = request(
    {
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: 'POST',
      headers: {
        'x-api-key': key,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'transfer-encoding': 'chunked',
      },
    },
    (response) => {
      response.resume();
      resolveAnswer(response.statusCode ?? 0);
    },
  );
  outgoing.on('error', () => resolveAnswer(0));
  outgoing.write(
    `--${boundary}\r\nContent-Disposition: form-data; name="angle"\r\n\r\ndial\r\n--${boundary}\r\nContent-Disposition: form-data; name="photo"; filename="a.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`,
  );
  return {
    answered,
    async finish(rest) {
      outgoing.end(Buffer.concat([rest, Buffer.from(`\r\n--${boundary}--\r\n`)]));
      return answered;
    },
  };
}

describe.each([
  ['embedded', () => startEmbeddedProduct(settings)],
  ['distributed', () => startDistributedProduct(settings)],
])('photo uploads held in memory at once (%s form)', (_form, start) => {
  let product: RunningProduct;
  let house: string;
  let photos: string;

  beforeAll(async () => {
    product = await start();
    house = (
      await call<{ apiKey: { secret: string } }>(product.url, 'POST', '/api/v1/accounts', {
        key: product.operatorKey,
        body: { name: 'Auction house', tier: 'enterprise' },
      })
    ).body.apiKey.secret;
    const registered = await call<{ object: { id: string } }>(product.url, 'POST', '/api/v1/auction/objects/register', {
      key: house,
      body: { title: 'Clock', category: 'watch' },
    });
    photos = `${product.url}/api/v1/auction/objects/${registered.body.object.id}/photos`;
  });

  afterAll(async () => {
    await product?.stop();
  });

  it('lets one run and one wait, answers the next 503 with Retry-After at once, and serves the held ones', async () => {
    const jpeg = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#8a6' } })
      .jpeg()
      .toBuffer();
    const running = heldUpload(photos, house);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const waiting = heldUpload(photos, house);
    await new Promise((resolve) => setTimeout(resolve, 200));

    const startedAt = Date.now();
    const form = new FormData();
    form.append('angle', 'movement');
    form.append('photo', new Blob([jpeg], { type: 'image/jpeg' }), 'b.jpg');
    const refused = await fetch(photos, { method: 'POST', headers: { 'x-api-key': house }, body: form });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('SERVICE_UNAVAILABLE');
    expect(Date.now() - startedAt).toBeLessThan(2_000);

    // The held uploads were not dropped: they finish and are bound (or refused on their own merits, never 503).
    expect(await running.finish(jpeg)).toBe(201);
    const second = await waiting.finish(jpeg);
    expect(second).not.toBe(503);
    expect(second).toBeLessThan(500);
  });
});
