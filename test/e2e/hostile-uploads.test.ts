// Hostile images and uploads (issue #16, items 3 and 5), over real HTTP in both forms: QR renders
// that would block the process, decompression bombs, non-images, multipart floods, and one picture
// bound at several angles of an object.
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { call, startEmbeddedProduct } from '../support/embedded.ts';
import { picture } from '../support/pictures.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

/** The product of the form under test (each form's block sets it before its tests run). */
let product: RunningProduct;
let blobDir: string;
let house: string;
let codeUrl: string;
const gtin = '09506000134369';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
const api = <T = Record<string, any>>(method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<T>(product.url, method, `/api/v1${path}`, options);

function expectError(response: { status: number; body: Json }, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error?.code, JSON.stringify(response.body)).toBe(code);
  expect(response.body.meta?.requestId).toEqual(expect.any(String));
}

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  let crc = 0xffffffff;
  for (const byte of Buffer.concat([head.subarray(4), data])) crc = (crcTable[(crc ^ byte) & 0xff] as number) ^ (crc >>> 8);
  const tail = Buffer.alloc(4);
  tail.writeUInt32BE((crc ^ 0xffffffff) >>> 0, 0);
  return Buffer.concat([head, data, tail]);
}

/**
 * A decompression bomb: a valid grey PNG of side × side pixels, all one shade, a few hundred KB on
 * the wire and side² bytes once decoded (12,000² is 144 megapixels, 3.6 × the 40-megapixel limit).
 */
function bombPng(side: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(side, 0);
  ihdr.writeUInt32BE(side, 4);
  ihdr.writeUInt8(8, 8); // bit depth
  ihdr.writeUInt8(0, 9); // greyscale
  const rows = Buffer.alloc((side + 1) * side); // filter byte 0 and black pixels, every row
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(rows, { level: 9 })),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

async function upload(objectId: string, angle: string, bytes: Buffer, type = 'image/jpeg') {
  const form = new FormData();
  form.append('angle', angle);
  form.append('photo', new Blob([bytes], { type }), 'photo');
  const response = await fetch(`${product.url}/api/v1/auction/objects/${objectId}/photos`, {
    method: 'POST',
    headers: { 'x-api-key': house },
    body: form,
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Json };
}

/** A raw multipart body, for the shapes FormData will not make. */
async function rawUpload(objectId: string, body: Buffer | string, contentType: string) {
  const response = await fetch(`${product.url}/api/v1/auction/objects/${objectId}/photos`, {
    method: 'POST',
    headers: { 'x-api-key': house, 'content-type': contentType },
    body,
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : {}) as Json };
}

async function register(category = 'watch'): Promise<string> {
  const registered = await api('POST', '/auction/objects/register', { key: house, body: { title: 'Object', category } });
  expect(registered.status, JSON.stringify(registered.body)).toBe(201);
  return registered.body.object.id as string;
}

const sha256Of = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function blobsStored(): Promise<string[]> {
  const names: string[] = [];
  for (const folder of await readdir(blobDir).catch(() => [] as string[])) {
    for (const name of await readdir(join(blobDir, folder)).catch(() => [] as string[])) names.push(name);
  }
  return names;
}

const qr = (query: string, key = house) =>
  fetch(`${product.url}/api/v1/code/qr?url=${encodeURIComponent(codeUrl)}&${query}`, { headers: { 'x-api-key': key } });

describe.each([
  ['embedded', startEmbeddedProduct],
  ['distributed', startDistributedProduct],
])('hostile images and uploads (%s form)', (_form, start: (env: Record<string, string>) => Promise<RunningProduct>) => {
  beforeAll(async () => {
    blobDir = await mkdtemp(join(tmpdir(), 'hallmark-blobs-'));
    // A long service timeout: the queue tests fill the renderers on purpose, and a loaded machine is slow.
    product = await start({
      HALLMARK_BLOB_DIR: blobDir,
      HALLMARK_REQUEST_TIMEOUT_MS: '60000',
      HALLMARK_PUBLIC_RATE_LIMIT: '1000',
    });
    const operator = product.operatorKey;
    const created = await api('POST', '/accounts', { key: operator, body: { name: 'Hostile house', tier: 'enterprise' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    house = created.body.apiKey.secret;
    // The house signs only GTINs it owns (docs/SIGNING.md).
    const granted = await api('POST', `/accounts/${created.body.account.id}/gtins`, { key: operator, body: { gtin } });
    expect(granted.status, JSON.stringify(granted.body)).toBe(201);
    const generated = await api('POST', '/code/generate', { key: house, body: { gtin, serialNumber: 'QR-1' } });
    expect(generated.status, JSON.stringify(generated.body)).toBe(201);
    codeUrl = generated.body.url;
  });

  afterAll(async () => {
    await product?.stop();
    await rm(blobDir, { recursive: true, force: true });
  });

  describe('QR images', () => {
    it('refuses more than 4,096 pixels a side, by size or by mm × dpi, fast and naming the limit', async () => {
      const started = performance.now();
      for (const query of [
        'format=png&mm=500&dpi=1200',
        'format=png&mm=400',
        'format=svg&mm=100&dpi=2400',
        'format=png&mm=174&dpi=600',
      ]) {
        const response = await qr(query);
        const body = (await response.json()) as Json;
        expectError({ status: response.status, body }, 400, 'VALIDATION_ERROR');
        expect(body.error.message).toContain('4096');
        expect(body.error.details).toMatchObject({ maxPixels: 4096 });
      }
      // Four refusals, none rendered: well under the seconds one render of that size takes.
      expect(performance.now() - started).toBeLessThan(2_000);
      // size above the limit is refused by the query schema.
      const tooWide = await qr('format=png&size=4097');
      expectError({ status: tooWide.status, body: (await tooWide.json()) as Json }, 400, 'VALIDATION_ERROR');
    });

    it('renders up to the limit: 173 mm at 600 dpi is 4,087 pixels, with the DPI recorded', async () => {
      const response = await qr('format=png&mm=173&dpi=600');
      expect(response.status).toBe(200);
      const image = await sharp(Buffer.from(await response.arrayBuffer())).metadata();
      expect(image).toMatchObject({ format: 'png', width: 4087, height: 4087, density: 600 });
    });

    it('is not publicly cacheable', async () => {
      for (const format of ['svg', 'png']) {
        const response = await qr(`format=${format}&size=300`);
        expect(response.status).toBe(200);
        const cacheControl = response.headers.get('cache-control') ?? '';
        expect(cacheControl).toContain('no-store');
        expect(cacheControl).toContain('private');
        expect(cacheControl).not.toContain('public');
      }
    });

    it('keeps the process answering while a large PNG renders: /health within 200 ms', async () => {
      // The probe runs on a thread of its own: this test shares its event loop with the product, so
      // timing /health from here would not see the product's loop stall while the probe's timers wait.
      const probe = new Worker(
        `const { parentPort, workerData } = require('node:worker_threads');
        let stop = false;
        const latencies = [];
        parentPort.on('message', () => { stop = true; });
        (async () => {
          // A first request warms the thread's fetch (loading it takes a while); then the measuring starts.
          await (await fetch(workerData.url + '/health')).arrayBuffer();
          parentPort.postMessage('ready');
          while (!stop || latencies.length < 5) {
            const started = performance.now();
            const response = await fetch(workerData.url + '/health');
            await response.arrayBuffer();
            latencies.push({ ms: Math.round(performance.now() - started), status: response.status });
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
          parentPort.postMessage(latencies);
          parentPort.close();
        })();`,
        { eval: true, workerData: { url: product.url } },
      );
      const messages: unknown[] = [];
      const nextMessage = () =>
        new Promise<unknown>((resolve, reject) => {
          probe.once('message', resolve);
          probe.once('error', reject);
        });
      messages.push(await nextMessage());
      const measured = nextMessage() as Promise<{ ms: number; status: number }[]>;
      const response = await qr('format=png&size=4096');
      probe.postMessage('stop');
      const latencies = await measured;
      await probe.terminate();
      expect(messages).toEqual(['ready']);
      expect(response.status).toBe(200);
      expect((await sharp(Buffer.from(await response.arrayBuffer())).metadata()).width).toBe(4096);
      expect(latencies.every((latency) => latency.status === 200)).toBe(true);
      expect(Math.max(...latencies.map((latency) => latency.ms)), JSON.stringify(latencies)).toBeLessThan(200);
    });

    it('queues a few renders and refuses the rest with 503 and Retry-After', async () => {
      const responses = await Promise.all(Array.from({ length: 12 }, () => qr('format=png&size=4096')));
      const statuses = responses.map((response) => response.status);
      expect(statuses.filter((status) => status === 200).length).toBeGreaterThanOrEqual(2);
      const refused = responses.filter((response) => response.status === 503);
      expect(refused.length, JSON.stringify(statuses)).toBeGreaterThan(0);
      expect(statuses.every((status) => status === 200 || status === 503)).toBe(true);
      for (const response of refused) {
        expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(((await response.json()) as Json).error.code).toBe('SERVICE_UNAVAILABLE');
      }
      // Once the queue drains, renders are served again.
      expect((await qr('format=png&size=512')).status).toBe(200);
    });

    it('leaves another account room while one draws its largest images as fast as it can', async () => {
      const neighbour = await api('POST', '/accounts', {
        key: product.operatorKey,
        body: { name: 'QR neighbour', tier: 'enterprise' },
      });
      expect(neighbour.status, JSON.stringify(neighbour.body)).toBe(201);
      const neighbourKey = neighbour.body.apiKey.secret as string;
      // The house fills both threads and would fill the queue: before, every other account's image was a 503.
      const flood = Promise.all(Array.from({ length: 8 }, () => qr('format=png&size=4096').then((response) => response.status)));
      await new Promise((resolve) => setTimeout(resolve, 300));
      const small: number[] = [];
      for (let index = 0; index < 3; index++) {
        const response = await qr('format=png&size=256', neighbourKey);
        await response.arrayBuffer();
        small.push(response.status);
      }
      const floodStatuses = await flood;
      expect(small).toEqual([200, 200, 200]);
      expect(floodStatuses.filter((status) => status === 503).length, JSON.stringify(floodStatuses)).toBeGreaterThan(0);
    });
  });

  describe('photo uploads', () => {
    it('refuses a decompression bomb (144 megapixels in a small PNG) quickly, and removes its blob', async () => {
      const objectId = await register();
      const bomb = bombPng(12_000);
      expect(bomb.length).toBeLessThan(1_000_000);
      const started = performance.now();
      const refused = await upload(objectId, 'dial', bomb, 'image/png');
      expectError(refused, 400, 'VALIDATION_ERROR');
      expect(refused.body.error.message).toContain('40');
      expect(performance.now() - started).toBeLessThan(3_000);
      expect(await blobsStored()).not.toContain(sha256Of(bomb));
    });

    it('refuses a non-image and a format it does not accept, and removes their blobs', async () => {
      const objectId = await register();
      const text = Buffer.from(`not an image ${Date.now()}`);
      expectError(await upload(objectId, 'dial', text), 400, 'VALIDATION_ERROR');
      const gif = await sharp(await picture(3))
        .gif()
        .toBuffer();
      const refused = await upload(objectId, 'dial', gif, 'image/gif');
      expectError(refused, 400, 'VALIDATION_ERROR');
      expect(refused.body.error.message).toMatch(/JPEG, PNG or WebP/);
      const stored = await blobsStored();
      expect(stored).not.toContain(sha256Of(text));
      expect(stored).not.toContain(sha256Of(gif));
    });

    it('keeps a blob another photo is bound to when the same bytes are refused elsewhere', async () => {
      const bound = await picture(11);
      const first = await register();
      expect((await upload(first, 'dial', bound)).status).toBe(201);
      // Another object, a wrong angle for its category: refused, but the bytes belong to the first object's photo.
      const second = await register('painting');
      expectError(await upload(second, 'dial', bound), 400, 'VALIDATION_ERROR');
      expect(await blobsStored()).toContain(sha256Of(bound));
      const verified = await api('GET', `/auction/objects/${first}/provenance`, { key: house });
      expect(verified.body.chain_valid).toBe(true);
    });

    it('answers too many fields, too many files and broken multipart with a 4xx envelope, never 500', async () => {
      const objectId = await register();
      const jpeg = await picture(12);
      const manyFields = new FormData();
      for (let i = 0; i < 40; i += 1) manyFields.append(`field${i}`, 'x');
      manyFields.append('angle', 'dial');
      manyFields.append('photo', new Blob([jpeg], { type: 'image/jpeg' }), 'photo.jpg');
      const fields = await fetch(`${product.url}/api/v1/auction/objects/${objectId}/photos`, {
        method: 'POST',
        headers: { 'x-api-key': house },
        body: manyFields,
      });
      const fieldsBody = (await fields.json()) as Json;
      // 413 naming the limit, not "the request body is too large" for a few bytes (an audit, 2026-12-07).
      expect(fields.status, JSON.stringify(fieldsBody)).toBe(413);
      expect(fieldsBody.error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { limit: { fields: 20 } } });
      // The boundary: 20 fields besides the file are taken (the angle among them), 21 are not.
      for (const [count, status] of [
        [19, 201],
        [20, 413],
        [21, 413],
      ] as const) {
        const form = new FormData();
        for (let i = 0; i < count; i += 1) form.append(`field${i}`, 'x');
        form.append('angle', 'dial');
        form.append('photo', new Blob([jpeg], { type: 'image/jpeg' }), 'photo.jpg');
        const answer = await fetch(`${product.url}/api/v1/auction/objects/${objectId}/photos`, {
          method: 'POST',
          headers: { 'x-api-key': house },
          body: form,
        });
        expect(answer.status, `${count} fields and the angle: ${await answer.clone().text()}`).toBe(status);
      }

      const manyFiles = new FormData();
      manyFiles.append('angle', 'dial');
      for (let i = 0; i < 5; i += 1) manyFiles.append('photo', new Blob([jpeg], { type: 'image/jpeg' }), `photo${i}.jpg`);
      const files = await fetch(`${product.url}/api/v1/auction/objects/${objectId}/photos`, {
        method: 'POST',
        headers: { 'x-api-key': house },
        body: manyFiles,
      });
      const filesBody = (await files.json()) as Json;
      expect(files.status, JSON.stringify(filesBody)).toBe(413);
      expect(filesBody.error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { limit: { files: 1 } } });

      const boundary = 'hostileboundary';
      const truncated = `--${boundary}\r\nContent-Disposition: form-data; name="angle"\r\n\r\ndial\r\n--${boundary}\r\nContent-Disposition: form-data; name="photo"; filename="a.jpg"\r\nContent-Type: image/jpeg\r\n\r\n${'x'.repeat(100)}`;
      for (const [body, contentType] of [
        [truncated, `multipart/form-data; boundary=${boundary}`],
        ['angle=dial', 'multipart/form-data'],
        ['', `multipart/form-data; boundary=${boundary}`],
      ] as const) {
        const answer = await rawUpload(objectId, body, contentType);
        expect(answer.status, `${contentType}: ${JSON.stringify(answer.body)}`).toBeGreaterThanOrEqual(400);
        expect(answer.status, `${contentType}: ${JSON.stringify(answer.body)}`).toBeLessThan(500);
        expect(answer.body.error?.code).toEqual(expect.any(String));
      }
    });

    it('decodes two photos at a time per process, queues a few, and answers the rest 503 with Retry-After', async () => {
      // Large noisy JPEGs (20 megapixels, under the limit): each decode takes a while.
      const side = 4_500;
      const noisy = await sharp({
        create: {
          width: side,
          height: side,
          channels: 3,
          background: '#808080',
          noise: { type: 'gaussian', mean: 128, sigma: 60 },
        },
      })
        .jpeg({ quality: 60 })
        .toBuffer();
      const objects = await Promise.all(Array.from({ length: 10 }, () => register()));
      const answers = await Promise.all(objects.map((objectId) => upload(objectId, 'dial', noisy)));
      const statuses = answers.map((answer) => answer.status);
      expect(
        statuses.every((status) => status === 201 || status === 503),
        JSON.stringify(statuses),
      ).toBe(true);
      expect(statuses.filter((status) => status === 201).length).toBeGreaterThanOrEqual(2);
      const refused = answers.filter((answer) => answer.status === 503);
      expect(refused.length, JSON.stringify(statuses)).toBeGreaterThan(0);
      for (const answer of refused) {
        expect(answer.body.error.code).toBe('SERVICE_UNAVAILABLE');
        expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      }
      // The bytes are bound to the objects that accepted them: the blob stays.
      expect(await blobsStored()).toContain(sha256Of(noisy));
    });
  });

  describe('one picture at several angles', () => {
    it('refuses the same JPEG for a second angle with 409, naming the other angle and the distance', async () => {
      const objectId = await register();
      const dial = await picture(21);
      expect((await upload(objectId, 'dial', dial)).status).toBe(201);
      const again = await upload(objectId, 'movement', dial);
      expectError(again, 409, 'CONFLICT');
      expect(again.body.error.details).toMatchObject({
        angle: 'movement',
        similarTo: 'dial',
        distance: 0,
        threshold: expect.any(Number),
      });
      // Binding the same picture again at its own angle is a replacement, not a duplicate.
      expect((await upload(objectId, 'dial', dial)).status).toBe(201);
    });

    it('refuses a resized, re-encoded copy, and a PNG of the same picture', async () => {
      const objectId = await register();
      const dial = await picture(22);
      expect((await upload(objectId, 'dial', dial)).status).toBe(201);
      const smaller = await sharp(dial).resize(200).jpeg({ quality: 55 }).toBuffer();
      const copy = await upload(objectId, 'movement', smaller);
      expectError(copy, 409, 'CONFLICT');
      expect(copy.body.error.details.similarTo).toBe('dial');
      expect(copy.body.error.details.distance).toBeLessThanOrEqual(copy.body.error.details.threshold);
      const png = await sharp(dial).resize(400).png().toBuffer();
      expectError(await upload(objectId, 'case_back', png, 'image/png'), 409, 'CONFLICT');
      // The refused copies' blobs are gone; the bound photo's stays.
      const stored = await blobsStored();
      expect(stored).not.toContain(sha256Of(smaller));
      expect(stored).not.toContain(sha256Of(png));
      expect(stored).toContain(sha256Of(dial));
    });

    it('accepts genuinely different pictures at every angle', async () => {
      const objectId = await register();
      const angles = ['dial', 'movement', 'serial_engraving', 'case_back'];
      for (const [i, angle] of angles.entries()) {
        const bound = await upload(objectId, angle, await picture(30 + i));
        expect(bound.status, JSON.stringify(bound.body)).toBe(201);
      }
      const object = await api('GET', `/auction/objects/${objectId}/provenance`, { key: house });
      expect(object.status).toBe(200);
    });
  });
});
