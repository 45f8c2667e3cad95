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

  it('reads again, on the epoch’s move, the owners whose changes the database counted, and only theirs', async () => {
    const third: Principal = { accountId: 'acc_cache_third', environment: 'test' };
    const epoch = async () =>
      Number(
        (await database.db.query<{ value: string }>(`SELECT value FROM cache_epochs WHERE name = 'code_blocklist'`))[0]?.value,
      );
    const cache = createBlocklistCache(database.db);
    await cache.reload();
    const before = await epoch();
    // A change made with the triggers off (a superuser's replication role): counted nowhere, so
    // reloadChanged leaves its owner's blocks as they were read.
    await database.db.transaction(async (tx) => {
      await tx.query('SET LOCAL session_replication_role = replica');
      await tx.query(
        `INSERT INTO code_blocklist (block_id, account_id, environment, gtin, serial_from, serial_to, kind, created_at, created_by_key)
         VALUES ('blk_cache_uncounted', $1, 'live', $2, 'F-1', 'F-1', 'withdrawn', now(), 'key_test')`,
        [other.accountId, gtin],
      );
    });
    await cache.reloadChanged();
    expect(cache.find('live', gtin, 'F-1', other.accountId)).toBeUndefined();
    // A change made as every writer makes it: counted for its owner, and the epoch moved.
    const blockId = await block(third, 'E-1');
    expect(await epoch()).toBeGreaterThan(before);
    await cache.reloadChanged();
    expect(cache.find('test', gtin, 'E-1', third.accountId)?.blockId).toBe(blockId);
    expect(cache.find('live', gtin, 'F-1', other.accountId)).toBeUndefined();
    // Its removal too; and a full read takes in everything.
    await database.db.query('UPDATE code_blocklist SET removed_at = now() WHERE block_id = $1', [blockId]);
    await cache.reloadChanged();
    expect(cache.find('test', gtin, 'E-1', third.accountId)).toBeUndefined();
    await cache.reload();
    expect(cache.find('live', gtin, 'F-1', other.accountId)?.kind).toBe('withdrawn');
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
