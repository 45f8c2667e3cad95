import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { type BlobStore, isSha256Hex } from './blob-store.ts';

/**
 * Blobs as files under `<root>/<first two hex>/<sha256>`, written to a temporary name and renamed,
 * so a reader never sees half a file. The embedded form's store; in the distributed form every
 * gateway and auction-service replica must see the same folder (a shared volume), or use S3.
 */
export function createFilesystemBlobStore(root: string): BlobStore {
  const base = resolve(root);
  const pathOf = (sha256: string) => {
    if (!isSha256Hex(sha256)) throw new RangeError('A blob key is a SHA-256 in lower-case hex.');
    return join(base, sha256.slice(0, 2), sha256);
  };
  return {
    async put(bytes) {
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      const path = pathOf(sha256);
      await mkdir(join(base, sha256.slice(0, 2)), { recursive: true });
      const temporary = `${path}.${randomUUID()}.tmp`;
      await writeFile(temporary, bytes, { mode: 0o600 });
      await rename(temporary, path);
      return { sha256, size: bytes.length };
    },
    async get(sha256) {
      try {
        return await readFile(pathOf(sha256));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
    },
    async has(sha256) {
      try {
        await stat(pathOf(sha256));
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
        throw error;
      }
    },
    async delete(sha256) {
      try {
        await unlink(pathOf(sha256));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    },
  };
}
