import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createPgliteDatabase } from './pglite-database.ts';
import type { SqlDatabase } from './sql-database.ts';

const sharedBuffersOf = async (db: SqlDatabase) =>
  (await db.query<{ shared_buffers: string }>('SHOW shared_buffers'))[0]?.shared_buffers;

describe("PGlite's buffer cache (shared_buffers)", () => {
  it('is 16MB for a database in memory, whose pages are in memory already, on either thread', async () => {
    for (const thread of ['main', 'worker'] as const) {
      const db = await createPgliteDatabase(undefined, { thread });
      try {
        expect(await sharedBuffersOf(db), thread).toBe('16MB');
      } finally {
        await db.close();
      }
    }
  });

  it("is PostgreSQL's 128MB for a database on disk unless told, and what it is told", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'hallmark-pglite-buffers-'));
    try {
      const first = await createPgliteDatabase(dataDir, { thread: 'worker' });
      expect(await sharedBuffersOf(first)).toBe('128MB');
      await first.close();
      const again = await createPgliteDatabase(dataDir, { thread: 'worker', sharedBuffers: '32MB' });
      expect(await sharedBuffersOf(again)).toBe('32MB');
      await again.close();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
