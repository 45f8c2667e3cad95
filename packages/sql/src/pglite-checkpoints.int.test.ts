import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createPgliteDatabase } from './pglite-database.ts';

// PGlite has no checkpointer (single-user PostgreSQL): without our CHECKPOINTs its WAL grows for ever.
describe.each(['main', 'worker'] as const)('PGlite on disk (%s thread) checkpoints once enough WAL was written', (thread) => {
  it('moves the checkpoint forward after more WAL than the limit, and not before', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'pglite-checkpoints-'));
    const db = await createPgliteDatabase(join(folder, 'pglite'), {
      checkpointAfterWalBytes: 2 * 1024 * 1024,
      walCheckIntervalMs: 50,
      thread,
    });
    try {
      const redo = async () =>
        (await db.query<{ redo: string }>('SELECT redo_lsn::text AS redo FROM pg_control_checkpoint()'))[0]?.redo;
      await db.query('CREATE TABLE filler (id serial PRIMARY KEY, payload text NOT NULL)');
      const first = await redo();
      // Under the limit: a few intervals pass with no checkpoint.
      await db.query(`INSERT INTO filler (payload) SELECT md5(i::text) FROM generate_series(1, 100) AS i`);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await redo()).toBe(first);
      // Well over it (about 8 MB of WAL): the next look checkpoints.
      await db.query(`INSERT INTO filler (payload) SELECT repeat(md5(i::text), 4) FROM generate_series(1, 40000) AS i`);
      const deadline = Date.now() + 10_000;
      while ((await redo()) === first && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await redo()).not.toBe(first);
      // A checkpoint keeps at most 64 MB of old segments for reuse (PostgreSQL's default: up to 1 GB).
      expect(await db.query('SHOW max_wal_size')).toEqual([{ max_wal_size: '64MB' }]);
      expect(await db.query('SHOW min_wal_size')).toEqual([{ min_wal_size: '32MB' }]);
    } finally {
      await db.close();
      await rm(folder, { recursive: true, force: true });
    }
  });
});
