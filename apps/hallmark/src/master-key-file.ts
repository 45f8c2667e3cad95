import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The embedded form's master key: made on first start in the data folder, readable by the owner
 * only (mode 0600). The distributed form takes HALLMARK_MASTER_KEY from a secret store instead.
 */
export async function loadOrCreateMasterKey(dataDir: string): Promise<string> {
  const path = join(dataDir, 'master.key');
  await mkdir(dataDir, { recursive: true });
  try {
    await writeFile(path, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return (await readFile(path, 'utf8')).trim();
}
