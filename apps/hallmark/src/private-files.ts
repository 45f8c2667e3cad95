import { chmod, mkdir } from 'node:fs/promises';
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
