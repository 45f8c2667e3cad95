import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The embedded form's master key: made on first start in the data folder, readable by the owner
 * only (mode 0600). The distributed form takes HALLMARK_MASTER_KEY from a secret store instead.
 * Written whole to a file of its own, then linked into place (which fails if a key is there
 * already, so starts at once all read the one that won): a start killed between creating
 * `master.key` and writing it left an empty file, and every later start failed on it.
 */
export async function loadOrCreateMasterKey(dataDir: string): Promise<string> {
  const path = join(dataDir, 'master.key');
  await mkdir(dataDir, { recursive: true });
  const written = (await readIfThere(path))?.trim();
  if (written) return written;
  // Empty (a start killed before this fix wrote it): nothing can have been sealed under it unless
  // the database exists, so it is made again; with a database, the key is lost and only a backup helps.
  if (written === '') {
    if (existsSync(join(dataDir, 'pglite'))) {
      throw new Error(`${path} is empty but the data folder holds a database: restore master.key from a backup`);
    }
    await unlink(path).catch(() => undefined);
  }
  const temporary = join(dataDir, `.master.key.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  await writeFile(temporary, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx', flush: true });
  try {
    await link(temporary, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
  return (await readFile(path, 'utf8')).trim();
}

async function readIfThere(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
