import { chmod, mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '@hallmark/runtime';

/**
 * The embedded form's data folder (database, master key, photos, the first operator key), made
 * or narrowed to its owner alone (mode 0700): other users of the machine can read none of it.
 * Fails with a ConfigError naming HALLMARK_DATA_DIR when the folder is not ours to change.
 */
export async function preparePrivateDataDir(dataDir: string): Promise<void> {
  try {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    await chmod(dataDir, 0o700);
  } catch (error) {
    throw new ConfigError(
      `Invalid configuration:\n  HALLMARK_DATA_DIR: ${dataDir} cannot be made private to this user (mode 0700): ${(error as Error).message}`,
    );
  }
}

/**
 * Writes a newly made operator key to `<dataDir>/operator-key`, readable by the owner only
 * (mode 0600), replacing an older file whole: the secret never goes to standard output, where
 * terminals, CI logs and log collectors would keep it. Returns the file's path.
 */
export async function writeOperatorKeyFile(dataDir: string, secret: string): Promise<string> {
  const path = join(dataDir, 'operator-key');
  const temporary = join(dataDir, `.operator-key.${process.pid}.tmp`);
  await writeFile(temporary, `${secret}\n`, { mode: 0o600, flag: 'w' });
  await chmod(temporary, 0o600);
  await rename(temporary, path);
  return path;
}
