import type { Principal } from '@hallmark/contracts';
import { connectTestDatabase, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateVerifyService } from '../migrations.ts';
import { createBlocklistCache } from './blocklist-cache.ts';

// Every verify-service replica holds every active block in memory. A change used to read them all
// again, so a tenant creating and removing a block in a loop had every replica read every tenant's
// blocks (up to HALLMARK_MAX_ACTIVE_BLOCKS each) over and over; a change now reads its owner's.
describe('the blocklist in memory, against PostgreSQL', () => {
  let database: { db: SqlDatabase; drop(): Promise<void> };
  const brand: Principal = { accountId: 'acc_cache_brand', environment: 'live' };
  const other: Principal = { accountId: 'acc_cache_other', environment: 'live' };
  const gtin = '09506000134352';
  let blocks = 0;

  beforeAll(async () => {
    database = await connectTestDatabase('blocklist_cache');
    await migrateVerifyService(database.db);
  });
  afterAll(() => database?.drop());

  /** Stores an active block straight in the table, as a change's transaction does (the cache is not told). */
  async function block(owner: Principal, from: string, to = from): Promise<string> {
    blocks += 1;
    const blockId = `blk_cache_${blocks}`;
    await database.db.query(
      `INSERT INTO code_blocklist (block_id, account_id, environment, gtin, serial_from, serial_to, kind, reason, created_at, created_by_key)
       VALUES ($1, $2, $3, $4, $5, $6, 'counterfeit', NULL, now(), 'key_test')`,
      [blockId, owner.accountId, owner.environment, gtin, from, to],
    );
    return blockId;
  }

  it('reads again only the owner named, and everyone without one', async () => {
    const cache = createBlocklistCache(database.db);
    await block(brand, 'A-1');
    await block(other, 'B-1');
    await cache.reload();
    expect(cache.find('live', gtin, 'A-1', brand.accountId)?.kind).toBe('counterfeit');
    expect(cache.find('live', gtin, 'B-1', other.accountId)).toBeDefined();
    // Another owner's block is not found under this owner.
    expect(cache.find('live', gtin, 'B-1', brand.accountId)).toBeUndefined();
    expect(cache.find('test', gtin, 'A-1', brand.accountId)).toBeUndefined();

    await block(brand, 'A-2');
    await block(other, 'B-2');
    await cache.reload(brand);
    expect(cache.find('live', gtin, 'A-2', brand.accountId)).toBeDefined();
    // The other owner's blocks were not read (they would be by a full read): its new block waits for its own change.
    expect(cache.find('live', gtin, 'B-2', other.accountId)).toBeUndefined();
    expect(cache.find('live', gtin, 'B-1', other.accountId)).toBeDefined();

    await database.db.query(`UPDATE code_blocklist SET removed_at = now() WHERE account_id = $1`, [brand.accountId]);
    await cache.reload(brand);
    expect(cache.find('live', gtin, 'A-1', brand.accountId)).toBeUndefined();
    expect(cache.find('live', gtin, 'A-2', brand.accountId)).toBeUndefined();

    await cache.reload();
    expect(cache.find('live', gtin, 'B-2', other.accountId)).toBeDefined();
  });

  it('lands reads in the order asked: a change made during a full read is in the read after it', async () => {
    const cache = createBlocklistCache(database.db);
    const everyone = cache.reload();
    await block(brand, 'C-1');
    const mine = cache.reload(brand);
    await Promise.all([everyone, mine]);
    expect(cache.find('live', gtin, 'C-1', brand.accountId)).toBeDefined();
    // Many changes at once share reads; all of them are in by the time the last resolves.
    const ids = await Promise.all(['D-1', 'D-2', 'D-3'].map((serial) => block(brand, serial)));
    await Promise.all(ids.map(() => cache.reload(brand)));
    for (const serial of ['D-1', 'D-2', 'D-3']) expect(cache.find('live', gtin, serial, brand.accountId)).toBeDefined();
  });
});
