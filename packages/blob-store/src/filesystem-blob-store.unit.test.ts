import { createHash } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFilesystemBlobStore } from './index.ts';

const folders: string[] = [];
afterAll(async () => {
  for (const folder of folders) await rm(folder, { recursive: true, force: true });
});

describe('filesystem blob store', () => {
  it('stores bytes under their SHA-256, once, and reads them back', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'blobs-'));
    folders.push(folder);
    const store = createFilesystemBlobStore(folder);
    const bytes = Buffer.from('a reference photo');
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    expect(await store.has(sha256)).toBe(false);
    expect(await store.get(sha256)).toBeUndefined();
    expect(await store.put(bytes)).toEqual({ sha256, size: bytes.length });
    expect(await store.put(bytes)).toEqual({ sha256, size: bytes.length });
    expect(await store.has(sha256)).toBe(true);
    expect(await store.get(sha256)).toEqual(bytes);
    expect(await readdir(join(folder, sha256.slice(0, 2)))).toEqual([sha256]);
    await expect(store.get('../../etc/passwd')).rejects.toThrow(RangeError);
  });

  it('deletes a blob, and deleting one that is not there is no error', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'blobs-'));
    folders.push(folder);
    const store = createFilesystemBlobStore(folder);
    const { sha256 } = await store.put(Buffer.from('a refused upload'));
    await store.delete(sha256);
    expect(await store.has(sha256)).toBe(false);
    await store.delete(sha256);
    await expect(store.delete('../../etc/passwd')).rejects.toThrow(RangeError);
  });
});
