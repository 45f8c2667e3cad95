import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPgliteDatabase, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeCacheContract } from './cache.contract.ts';
import { createJournaledCache, type JournaledCache } from './journaled-cache.ts';

describeCacheContract('journaled (memory over PGlite)', async () => {
  const db = await createPgliteDatabase();
  const cache = await createJournaledCache({ db });
  return {
    ...cache,
    async close() {
      await cache.close();
      await db.close();
    },
  };
});

describe('journaled cache: its state outlives a restart', () => {
  let folder: string;
  let nowMs = Date.parse('2031-05-01T10:00:30Z');
  const now = () => nowMs;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'hallmark-journal-'));
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  /**
   * A process's life on the data folder: the database opened, the cache read back, `work`, then a
   * stop: `close` writes what is left; `crash` closes the database first, so nothing more is written.
   */
  async function life<T>(
    work: (cache: JournaledCache, db: SqlDatabase) => Promise<T>,
    options: { stop?: 'close' | 'crash'; flushIntervalMs?: number } = {},
  ) {
    const db = await createPgliteDatabase(join(folder, 'pglite'));
    const errors: unknown[] = [];
    const cache = await createJournaledCache({
      db,
      now,
      flushIntervalMs: options.flushIntervalMs ?? 20,
      onError: (error) => errors.push(error),
    });
    try {
      return await work(cache, db);
    } finally {
      if (options.stop === 'crash') {
        await db.close();
        await cache.close();
        expect(errors).not.toEqual([]);
      } else {
        await cache.close();
        await db.close();
        expect(errors).toEqual([]);
      }
    }
  }

  const scan = (subject: string, client: string, location?: { latitude: number; longitude: number }) => ({
    subject,
    atMs: nowMs,
    client,
    repeatWindowMs: 10_000,
    windowMs: 3_600_000,
    clientWindowMs: 600_000,
    location: location ? { ...location, reportedBy: 'account-a' } : undefined,
    retentionMs: 90 * 86_400_000,
  });
  const daily = (key: string, cost: number) => ({ key, cost, limit: 10, resetAtMs: Date.parse('2031-05-02T00:00:00Z') });
  const perSecond = (key: string) => ({ key, cost: 1, limit: 5, resetAtMs: nowMs + 1_000 });

  it('keeps scan histories, quotas and entries across a stop and a start; drops deleted and short-lived ones', async () => {
    await life(async (cache) => {
      await cache.recordScan(scan('live:g:s1', 'a', { latitude: 48.85, longitude: 2.35 }));
      await cache.recordScan(scan('live:g:s1', 'b'));
      expect(cache.consumeQuotas([daily('rl:{acc:live}:d', 7)])).toMatchObject({ allowed: true });
      expect(cache.consumeQuotas([perSecond('rl:{acc:live}:s')])).toMatchObject({ allowed: true });
      await cache.set('kept', 'v', { ttlMs: 3_600_000 });
      await cache.set('forever', 'f');
      await cache.set('gone', 'x');
      await cache.delete('gone');
      expect(await cache.increment('counter', 4, 3_600_000)).toBe(4);
    });
    nowMs += 500;
    await life(async (cache, db) => {
      const next = await cache.recordScan(scan('live:g:s1', 'c', { latitude: 40.71, longitude: -74.0 }));
      expect(next).toMatchObject({
        total: 3,
        firstSeenMs: nowMs - 500,
        repeat: false,
        scansInWindow: 3,
        clientsInWindow: 3,
        previousLocation: { latitude: 48.85, longitude: 2.35, atMs: nowMs - 500 },
      });
      // The same client within its repeat window is a repeat after the restart too.
      expect(await cache.recordScan(scan('live:g:s1', 'c'))).toMatchObject({ total: 4, repeat: true, scansInWindow: 3 });
      expect(cache.consumeQuotas([daily('rl:{acc:live}:d', 4)])).toMatchObject({ allowed: false, counters: [{ used: 7 }] });
      expect(cache.consumeQuotas([daily('rl:{acc:live}:d', 3)])).toMatchObject({ allowed: true, counters: [{ used: 10 }] });
      expect(await cache.get('kept')).toBe('v');
      expect(await cache.get('forever')).toBe('f');
      expect(await cache.get('gone')).toBeUndefined();
      expect(await cache.increment('counter', 1, 3_600_000)).toBe(5);
      // The per-second counter would be over before any restart: never written.
      const rows = await db.query<{ kind: string; key: string }>('SELECT kind, key FROM cache_state ORDER BY kind, key');
      expect(rows.map((row) => `${row.kind}:${row.key}`)).not.toContain('quota:rl:{acc:live}:s');
      expect(rows.map((row) => `${row.kind}:${row.key}`)).not.toContain('entry:gone');
    });
  });

  it('reads back no expired state', async () => {
    await life(async (cache) => {
      await cache.set('hour', 'h', { ttlMs: 3_600_000 });
    });
    nowMs += 3_600_001;
    await life(async (cache, db) => {
      expect(await cache.get('hour')).toBeUndefined();
      expect(await db.query(`SELECT 1 FROM cache_state WHERE key = 'hour'`)).toEqual([]);
    });
  });

  it('writes changes within its interval without being asked', async () => {
    await life(async (cache, db) => {
      expect(cache.consumeQuotas([daily('rl:{timer}:d', 2)])).toMatchObject({ allowed: true });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await db.query(`SELECT state FROM cache_state WHERE kind = 'quota' AND key = 'rl:{timer}:d'`)).toEqual([
        { state: 2 },
      ]);
    });
  });

  it('a crash loses at most what changed since the last flush', async () => {
    await life(
      async (cache) => {
        expect(cache.consumeQuotas([daily('rl:{crash}:d', 3)])).toMatchObject({ allowed: true });
        await cache.flush();
        expect(cache.consumeQuotas([daily('rl:{crash}:d', 2)])).toMatchObject({ allowed: true });
        await cache.flush();
        expect(cache.consumeQuotas([daily('rl:{crash}:d', 1)])).toMatchObject({ allowed: true, counters: [{ used: 6 }] });
      },
      { stop: 'crash', flushIntervalMs: 60_000 },
    );
    await life(async (cache) => {
      // The last spending (1) had not been written when the process died.
      expect(cache.consumeQuotas([daily('rl:{crash}:d', 0)])).toMatchObject({ counters: [{ used: 5 }] });
    });
  });

  it('says how long its oldest unwritten change has waited while the database is busy, and callers waiting share one write', async () => {
    await life(
      async (cache, db) => {
        expect(cache.unsavedForMs()).toBe(0);
        // The database busy (a batch's transaction): the write waits behind it.
        let release!: () => void;
        const held = new Promise<void>((resolve) => {
          release = resolve;
        });
        const busy = db.transaction(async (tx) => {
          await tx.query('SELECT 1');
          await held;
        });
        expect(cache.consumeQuotas([daily('rl:{lag}:d', 1)])).toMatchObject({ allowed: true });
        const first = cache.persist();
        await new Promise((resolve) => setTimeout(resolve, 150));
        expect(cache.unsavedForMs()).toBeGreaterThanOrEqual(140);
        // A hundred callers waiting for their spends' write, made while the first write waits: one more write.
        const waiting = Array.from({ length: 100 }, () => {
          cache.consumeQuotas([daily('rl:{lag}:d', 0)]);
          cache.consumeQuotas([daily(`rl:{lag-${Math.random()}}:d`, 1)]);
          return cache.persist();
        });
        expect(new Set(waiting).size).toBe(1);
        release();
        await Promise.all([busy, first, ...waiting]);
        expect(cache.unsavedForMs()).toBe(0);
        expect(
          Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM cache_state WHERE key LIKE 'rl:{lag%'`))[0]?.n),
        ).toBe(101);
      },
      { flushIntervalMs: 60_000 },
    );
  });

  it('persist resolves once what was spent is written: a crash right after it keeps it', async () => {
    await life(
      async (cache) => {
        expect(cache.consumeQuotas([daily('rl:{persist}:d', 4)])).toMatchObject({ allowed: true });
        await cache.persist();
        // Spent after it: not written when the process dies.
        expect(cache.consumeQuotas([daily('rl:{persist}:d', 1)])).toMatchObject({ counters: [{ used: 5 }] });
      },
      { stop: 'crash', flushIntervalMs: 60_000 },
    );
    await life(async (cache) => {
      expect(cache.consumeQuotas([daily('rl:{persist}:d', 0)])).toMatchObject({ counters: [{ used: 4 }] });
    });
  });
});
