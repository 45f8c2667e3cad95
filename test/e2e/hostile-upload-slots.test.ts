// Uploads a gateway holds in memory at once are bounded (issue #16, item 5): each photo is read into
// memory before it is stored, so a burst of large uploads from a script could exhaust the process.
// Beyond HALLMARK_UPLOADS_AT_ONCE running and as many waiting, the answer is 503 with Retry-After.
import { request } from 'node:http';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';

let t: TestProduct;
let house: string;
let objectId: string;

beforeAll(async () => {
  t = await startTestProduct({ HALLMARK_UPLOADS_AT_ONCE: '1' });
  const operator = t.product.generatedOperatorKey as string;
  house = (
    await call<{ apiKey: { secret: string } }>(t.url, 'POST', '/api/v1/accounts', {
      key: operator,
      body: { name: 'Auction house', tier: 'enterprise' },
    })
  ).body.apiKey.secret;
  const registered = await call<{ object: { id: string } }>(t.url, 'POST', '/api/v1/auction/objects/register', {
    key: house,
    body: { title: 'Clock', category: 'watch' },
  });
  objectId = registered.body.object.id;
});

afterAll(async () => {
  await t?.stop();
});

const boundary = 'slotsboundary';

/** An upload whose body is sent only up to the file's first bytes and then held open, until `finish`. */
function heldUpload(): { finish(rest: Buffer): Promise<number>; answered: Promise<number> } {
  const url = new URL(`${t.url}/api/v1/auction/objects/${objectId}/photos`);
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
        'x-api-key': house,
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

describe('photo uploads held in memory at once', () => {
  it('lets one run and one wait, answers the next 503 with Retry-After at once, and serves the held ones', async () => {
    const jpeg = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#8a6' } })
      .jpeg()
      .toBuffer();
    const running = heldUpload();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const waiting = heldUpload();
    await new Promise((resolve) => setTimeout(resolve, 200));

    const startedAt = Date.now();
    const form = new FormData();
    form.append('angle', 'movement');
    form.append('photo', new Blob([jpeg], { type: 'image/jpeg' }), 'b.jpg');
    const refused = await fetch(`${t.url}/api/v1/auction/objects/${objectId}/photos`, {
      method: 'POST',
      headers: { 'x-api-key': house },
      body: form,
    });
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
