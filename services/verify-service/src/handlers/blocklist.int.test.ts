import { createInProcessBus } from '@hallmark/bus';
import type { Principal } from '@hallmark/contracts';
import { createSqlEventStore, type EventStore } from '@hallmark/event-store';
import { accountStream } from '@hallmark/provenance';
import { connectTestDatabase, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateVerifyService } from '../migrations.ts';
import { type BlocklistDeps, deleteBlock } from './blocklist.ts';

// Two removals of one blocklist entry at once (a double click, two operators): both read the entry
// active, both append. The row is updated only while active, in the event's transaction, so one
// append commits and the other rolls back: one `code.unblocked` (one webhook), both answers the same.
describe('removing a blocklist entry twice at once, against PostgreSQL', () => {
  let database: { db: SqlDatabase; drop(): Promise<void> };
  /** The database as the store and the handler see it: each removal's first read waits for the other's. */
  let racing: SqlDatabase;
  let eventStore: EventStore;
  const owner: Principal = { accountId: 'acc_blocklist_race', environment: 'live' };
  let waiting: Array<() => void> = [];
  let holding = 0;

  beforeAll(async () => {
    database = await connectTestDatabase('blocklist_race');
    await migrateVerifyService(database.db);
    const real = database.db;
    racing = new Proxy(real, {
      get(target, property, receiver) {
        if (property !== 'query') return Reflect.get(target, property, receiver);
        return async (text: string, params?: unknown[]) => {
          // Each removal's first read of the entry, outside its transaction: held until both made it
          // (the loser's read of the winner's removal afterwards passes).
          if (holding > 0 && /^SELECT .* FROM code_blocklist WHERE block_id = \$1/s.test(text)) {
            holding -= 1;
            const rows = await real.query(text, params);
            await new Promise<void>((resolve) => {
              waiting.push(resolve);
              if (waiting.length === 2) for (const release of waiting.splice(0)) release();
            });
            return rows;
          }
          return real.query(text, params);
        };
      },
    }) as SqlDatabase;
    eventStore = await createSqlEventStore(racing);
  });

  afterAll(async () => {
    await eventStore?.close();
    await database?.drop();
  });

  it('records one removal and one event, and answers both with it', async () => {
    await database.db.query(
      `INSERT INTO code_blocklist (block_id, account_id, environment, gtin, serial_from, serial_to, kind, reason, created_at, created_by_key)
       VALUES ('blk_race', $1, 'live', '09506000134352', 'S-1', 'S-1', 'withdrawn', 'recalled', now(), 'key_a')`,
      [owner.accountId],
    );
    const depsAt = (at: string): BlocklistDeps => ({
      db: racing,
      eventStore,
      bus: createInProcessBus(),
      reload: async () => {},
      clock: () => new Date(at),
      maxActiveBlocks: 10_000,
    });
    waiting = [];
    holding = 2;
    const [first, second] = await Promise.all([
      deleteBlock(depsAt('2026-12-02T08:00:00.000Z'), { principal: owner, client: { keyId: 'key_a' }, blockId: 'blk_race' }),
      deleteBlock(depsAt('2026-12-02T08:00:01.000Z'), { principal: owner, client: { keyId: 'key_b' }, blockId: 'blk_race' }),
    ]);
    const events = (await eventStore.readStream(accountStream(owner))).filter((event) => event.type === 'code.unblocked');
    expect(events).toHaveLength(1);
    const [row] = await database.db.query<{ removed_at: Date; removed_by_key: string }>(
      `SELECT removed_at, removed_by_key FROM code_blocklist WHERE block_id = 'blk_race'`,
    );
    const stored = row?.removed_at.toISOString();
    expect(first.status).toBe('removed');
    expect(second.status).toBe('removed');
    // Both answer the removal that was stored, and the event says the same.
    expect([first.removedAt, second.removedAt]).toEqual([stored, stored]);
    expect(events[0]?.data).toMatchObject({ removedAt: stored, by: row?.removed_by_key });
  });
});
