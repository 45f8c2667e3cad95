import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseMasterKey } from '@hallmark/crypto';
import { describe, expect, it } from 'vitest';
import { loadOrCreateMasterKey } from './master-key-file.ts';

describe('the embedded master key', () => {
  it('is made once in the data folder, readable by its owner only, and read back the same', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'master-key-'));
    try {
      const first = await loadOrCreateMasterKey(dataDir);
      expect(parseMasterKey(first)).toHaveLength(32);
      expect((await stat(join(dataDir, 'master.key'))).mode & 0o777).toBe(0o600);
      expect(await loadOrCreateMasterKey(dataDir)).toBe(first);
      const results = await Promise.all(Array.from({ length: 5 }, () => loadOrCreateMasterKey(join(dataDir, 'race'))));
      expect(new Set(results).size).toBe(1);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('is made again when a start was killed before writing it (an empty file, no database yet), and never then', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'master-key-'));
    try {
      await writeFile(join(dataDir, 'master.key'), '', { mode: 0o600 });
      const made = await loadOrCreateMasterKey(dataDir);
      expect(parseMasterKey(made)).toHaveLength(32);
      expect(await readdir(dataDir)).toEqual(['master.key']);
      // With a database, an empty key is a lost key: refused, never replaced.
      await writeFile(join(dataDir, 'master.key'), '');
      await mkdir(join(dataDir, 'pglite'));
      await expect(loadOrCreateMasterKey(dataDir)).rejects.toThrow(/restore master.key/);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
