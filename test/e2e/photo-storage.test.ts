// One tenant cannot fill the blob store every tenant shares (docs/AUCTION.md, Photos): an account's
// photos in an environment, every one bound and replaced ones included (their blobs are kept), stay
// within HALLMARK_PHOTO_BYTES_PER_ACCOUNT. Before, an account could upload photo after photo to one
// angle at its request rate, 20 MB each, and every one stayed on disk. Over HTTP, in both forms.
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { call, startEmbeddedProduct } from '../support/embedded.ts';
import { picture } from '../support/pictures.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let product: RunningProduct;
let blobDir: string;
/** Three distinct pictures; the limit holds the first two and not the third. */
let pictures: Buffer[];
let limitBytes: number;

const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(product.url, method, `/api/v1${path}`, options);

async function newTenant(): Promise<string> {
  const created = await api('POST', '/accounts', {
    key: product.operatorKey,
    body: { name: `House ${Math.random()}`, tier: 'enterprise' },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.apiKey.secret;
}

async function register(key: string): Promise<string> {
  const registered = await api('POST', '/auction/objects/register', { key, body: { title: 'Watch', category: 'watch' } });
  expect(registered.status, JSON.stringify(registered.body)).toBe(201);
  return registered.body.object.id;
}

async function upload(key: string, objectId: string, angle: string, bytes: Buffer) {
  const form = new FormData();
  form.append('angle', angle);
  form.append('photo', new Blob([bytes], { type: 'image/jpeg' }), 'photo.jpg');
  const response = await fetch(`${product.url}/api/v1/auction/objects/${objectId}/photos`, {
    method: 'POST',
    headers: { 'x-api-key': key },
    body: form,
  });
  return { status: response.status, body: (await response.json()) as Json };
}

async function blobsStored(): Promise<string[]> {
  const names: string[] = [];
  for (const folder of await readdir(blobDir).catch(() => [] as string[])) {
    for (const name of await readdir(join(blobDir, folder)).catch(() => [] as string[])) names.push(name);
  }
  return names;
}

const sha256Of = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe.each([
  ['embedded', startEmbeddedProduct],
  ['distributed', startDistributedProduct],
])('photo storage per account (%s form)', (_form, start: (env: Record<string, string>) => Promise<RunningProduct>) => {
  beforeAll(async () => {
    pictures = await Promise.all([1, 2, 3].map((seed) => picture(seed)));
    const [first, second] = pictures as [Buffer, Buffer];
    limitBytes = first.length + second.length + 100;
    blobDir = await mkdtemp(join(tmpdir(), 'hallmark-photo-storage-'));
    product = await start({
      HALLMARK_BLOB_DIR: blobDir,
      HALLMARK_PHOTO_BYTES_PER_ACCOUNT: String(limitBytes),
      // Six uploads at once reach auction-service together (the default holds four).
      HALLMARK_UPLOADS_AT_ONCE: '8',
    });
  });

  afterAll(async () => {
    await product?.stop();
    await rm(blobDir, { recursive: true, force: true });
  });

  it('counts replaced photos, refuses a photo past the limit with 413 and keeps no blob of it; other tenants and the test environment have their own', async () => {
    const [first, second, third] = pictures as [Buffer, Buffer, Buffer];
    const house = await newTenant();
    const watch = await register(house);
    expect((await upload(house, watch, 'dial', first)).status).toBe(201);
    // A replacement: the first photo's blob stays, so both count.
    const replaced = await upload(house, watch, 'dial', second);
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(201);
    expect(replaced.body.replaced).toBe(true);

    const refused = await upload(house, watch, 'movement', third);
    expect(refused.status, JSON.stringify(refused.body)).toBe(413);
    expect(refused.body.error).toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      details: { limit: 'photo-storage', usedBytes: first.length + second.length, limitBytes, size: third.length },
    });
    expect(await blobsStored()).not.toContain(sha256Of(third));
    // The limit is the account's, not the object's.
    const another = await register(house);
    expect((await upload(house, another, 'dial', third)).status).toBe(413);
    // The refusals changed nothing: the object still has its photo at the dial, and only it.
    const history = await api('GET', `/auction/objects/${watch}/provenance`, { key: house });
    expect(history.status, JSON.stringify(history.body)).toBe(200);
    const serialized = JSON.stringify(history.body);
    expect(serialized).toContain(sha256Of(second));
    expect(serialized).not.toContain(sha256Of(third));

    // Another tenant's room is its own.
    const neighbour = await newTenant();
    expect((await upload(neighbour, await register(neighbour), 'dial', third)).status).toBe(201);
    expect(await blobsStored()).toContain(sha256Of(third));
    // So is the house's test environment.
    const sandbox = await api('POST', '/keys', { key: house, body: { name: 'sandbox', scopes: ['*'], environment: 'test' } });
    expect(sandbox.status, JSON.stringify(sandbox.body)).toBe(201);
    const testWatch = await register(sandbox.body.secret);
    expect((await upload(sandbox.body.secret, testWatch, 'dial', third)).status).toBe(201);
  });

  it('keeps uploads at once within the limit: each sees the bytes the others bound', async () => {
    const house = await newTenant();
    const watches = await Promise.all(Array.from({ length: 6 }, () => register(house)));
    const photos = await Promise.all([4, 5, 6, 7, 8, 9].map((seed) => picture(seed)));
    const answers = await Promise.all(watches.map((watch, index) => upload(house, watch, 'dial', photos[index] as Buffer)));
    for (const answer of answers) expect([201, 413], JSON.stringify(answer.body)).toContain(answer.status);
    const boundBytes = answers.reduce(
      (sum, answer, index) => sum + (answer.status === 201 ? (photos[index] as Buffer).length : 0),
      0,
    );
    expect(answers.filter((answer) => answer.status === 201).length).toBeGreaterThan(0);
    // Before: every upload that started with room bound its photo (six at once stored 5.3 times the limit).
    expect(boundBytes).toBeLessThanOrEqual(limitBytes);
  });
});
