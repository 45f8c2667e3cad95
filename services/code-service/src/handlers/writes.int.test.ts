import { randomBytes } from 'node:crypto';
import { createGtinSigners, createSigningKeyring, migrateAccounts, provisionAccount } from '@hallmark/accounts';
import type { Principal } from '@hallmark/contracts';
import { createSqlEventStore, type EventStore } from '@hallmark/event-store';
import { connectTestDatabase, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordGtinClaim } from '../gtin-claim-log.ts';
import { migrateCodes } from '../store/code-store.ts';
import { createGroupCommit, type GenerateDeps, type GeneratedCodes, generateCodes } from './generate-code.ts';
import { createSchemaCatalog, type SchemaCatalog } from './schemas.ts';

// Codes and schemas are stored with their events in one transaction (#17: no hand-written undo).
// A process killed between the row and its event used to leave the row without its event; here
// the event's insert is refused by a trigger and the undo that used to follow is refused too (what
// a kill does: it never runs), and neither rows nor events may stay.
describe('code-service writes and their events, against PostgreSQL', () => {
  let database: { db: SqlDatabase; drop(): Promise<void> };
  let eventStore: EventStore;
  let deps: GenerateDeps;
  let schemas: SchemaCatalog;
  let brand: Principal;
  const now = new Date('2026-11-25T10:00:00Z');
  const gtin = '09506000134352';

  beforeAll(async () => {
    database = await connectTestDatabase('code_writes');
    const { db } = database;
    await migrateAccounts(db);
    await migrateCodes(db);
    eventStore = await createSqlEventStore(db);
    const account = (await provisionAccount({ db, eventStore }, { name: 'Brand', tier: 'enterprise', environment: 'live' }, now))
      .account;
    brand = { accountId: account.id, environment: 'live' };
    await recordGtinClaim(
      { db, eventStore },
      { accountId: account.id, environment: 'live', target: { kind: 'prefix', value: '9506000' }, source: 'granted' },
      'operator',
      now,
    );
    schemas = createSchemaCatalog({ db, eventStore, clock: () => now });
    deps = {
      schemas,
      signers: createGtinSigners(db),
      db,
      eventStore,
      keyring: createSigningKeyring(db, randomBytes(32)),
      resolverUrl: 'https://id.example.test',
      linkOrder: 'spec',
      clock: () => now,
    };
  });

  afterAll(async () => {
    await eventStore?.close();
    await database?.drop();
  });

  /** Refuses events of `type` (and, with `undo`, the hand-written undo on `undo.table`) until dropped. */
  async function refuse(type: string, undo?: { table: string; on: 'DELETE' | 'UPDATE' }) {
    const { db } = database;
    await db.query(`CREATE OR REPLACE FUNCTION refuse_write() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'refused by the test'; END $$`);
    // An event is a row of events, or goes in a pack (event store migration 0003: a code's first).
    for (const table of ['events', 'event_packs']) {
      await db.query(
        `CREATE TRIGGER refuse_event BEFORE INSERT ON ${table} FOR EACH ROW WHEN (NEW.event_type = '${type}') EXECUTE FUNCTION refuse_write()`,
      );
    }
    if (undo) {
      await db.query(
        `CREATE TRIGGER refuse_undo BEFORE ${undo.on} ON ${undo.table} FOR EACH ROW EXECUTE FUNCTION refuse_write()`,
      );
    }
    return async () => {
      for (const table of ['events', 'event_packs']) await db.query(`DROP TRIGGER refuse_event ON ${table}`);
      if (undo) await db.query(`DROP TRIGGER refuse_undo ON ${undo.table}`);
    };
  }

  const codeRows = async (serialPrefix: string) =>
    Number(
      (
        await database.db.query<{ n: string }>('SELECT count(*)::text AS n FROM codes WHERE account_id = $1 AND serial LIKE $2', [
          brand.accountId,
          `${serialPrefix}%`,
        ])
      )[0]?.n,
    );
  const codeEvents = async (serialPrefix: string) =>
    Number(
      (
        await database.db.query<{ n: string }>(
          `SELECT count(*)::text AS n FROM event_log WHERE event_type = 'code.generated' AND data->>'serial' LIKE $1`,
          [`${serialPrefix}%`],
        )
      )[0]?.n,
    );
  const errorCodes = ({ results }: GeneratedCodes) => results.map((result) => ('error' in result ? result.error.code : 'ok'));

  it('stores no code when its event cannot be written, even if the process dies before any undo', async () => {
    const drop = await refuse('code.generated', { table: 'codes', on: 'DELETE' });
    try {
      await expect(
        generateCodes(
          deps,
          brand,
          [
            { gtin, serialNumber: 'CUT-1' },
            { gtin, serialNumber: 'CUT-2' },
          ],
          0,
          'req-cut',
        ),
      ).rejects.toThrow();
    } finally {
      await drop();
    }
    expect(await codeRows('CUT-')).toBe(0);
    expect(await codeEvents('CUT-')).toBe(0);
    // Nothing half-stored stands in the way of the retry.
    const retried = await generateCodes(deps, brand, [{ gtin, serialNumber: 'CUT-1' }], 0, 'req-cut-2');
    expect(errorCodes(retried)).toEqual(['ok']);
    expect(await codeRows('CUT-')).toBe(1);
    expect(await codeEvents('CUT-')).toBe(1);
  });

  it('answers DUPLICATE_SERIAL per item in a batch where only some serials are taken, and stores the rest with their events', async () => {
    const taken = Array.from({ length: 100 }, (_, i) => ({ gtin, serialNumber: `MIX-${i * 5}` }));
    expect(errorCodes(await generateCodes(deps, brand, taken, 0, 'req-mix-1')).every((code) => code === 'ok')).toBe(true);
    const batch = Array.from({ length: 500 }, (_, i) => ({ gtin, serialNumber: `MIX-${i}` }));
    batch.push({ gtin, serialNumber: 'MIX-1' }); // twice in this batch
    const outcome = await generateCodes(deps, brand, batch, 0, 'req-mix-2');
    expect(outcome.results.map((result) => result.index)).toEqual(batch.map((_, i) => i));
    const expected = batch.map((_, i) => (i === 500 || (i < 500 && i % 5 === 0) ? 'DUPLICATE_SERIAL' : 'ok'));
    expect(errorCodes(outcome)).toEqual(expected);
    expect(outcome.madeBefore).toBe(0);
    expect(await codeRows('MIX-')).toBe(500);
    expect(await codeEvents('MIX-')).toBe(500);
  });

  it('gives one of 20 parallel generates of one serial the code, the others DUPLICATE_SERIAL, and records one event', async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) => generateCodes(deps, brand, [{ gtin, serialNumber: 'RACE-1' }], 0, `req-race-${i}`)),
    );
    const codes = outcomes.flatMap(errorCodes).sort();
    expect(codes).toEqual(['ok', ...Array.from({ length: 19 }, () => 'DUPLICATE_SERIAL')].sort());
    expect(await codeRows('RACE-')).toBe(1);
    expect(await codeEvents('RACE-')).toBe(1);
  });

  it('answers every item of batches racing over the same serials in opposite orders (no deadlock)', async () => {
    for (let round = 0; round < 5; round += 1) {
      const serials = Array.from({ length: 300 }, (_, i) => ({ gtin, serialNumber: `ORDER-${round}-${i}` }));
      const outcomes = await Promise.all([
        generateCodes(deps, brand, serials, 0, `req-order-${round}-a`),
        generateCodes(deps, brand, [...serials].reverse(), 0, `req-order-${round}-b`),
      ]);
      const codes = outcomes.flatMap(errorCodes);
      expect(codes.filter((code) => code === 'ok')).toHaveLength(300);
      expect(codes.filter((code) => code === 'DUPLICATE_SERIAL')).toHaveLength(300);
    }
    expect(await codeRows('ORDER-')).toBe(1500);
    expect(await codeEvents('ORDER-')).toBe(1500);
  });

  describe('group commit (concurrent small generates share transactions)', () => {
    const grouped = () => ({ ...deps, groupCommit: createGroupCommit(deps) });
    const transactionsOf = async (serialPrefix: string) =>
      Number(
        (
          await database.db.query<{ n: string }>(
            `SELECT count(DISTINCT transaction_id)::text AS n FROM event_log WHERE event_type = 'code.generated' AND data->>'serial' LIKE $1`,
            [`${serialPrefix}%`],
          )
        )[0]?.n,
      );

    it('stores 60 concurrent generates, each code with its event and request id, in fewer transactions than requests', async () => {
      const withGroups = grouped();
      const outcomes = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          generateCodes(withGroups, brand, [{ gtin, serialNumber: `GROUP-${i}` }], 0, `req-group-${i}`),
        ),
      );
      expect(outcomes.flatMap(errorCodes).every((code) => code === 'ok')).toBe(true);
      expect(await codeRows('GROUP-')).toBe(60);
      expect(await codeEvents('GROUP-')).toBe(60);
      expect(await transactionsOf('GROUP-')).toBeLessThan(60);
      const requestIds = await database.db.query<{ serial: string; request_id: string }>(
        `SELECT data->>'serial' AS serial, metadata->>'requestId' AS request_id FROM event_log
         WHERE event_type = 'code.generated' AND data->>'serial' LIKE 'GROUP-%'`,
      );
      for (const row of requestIds) expect(row.request_id).toBe(`req-group-${row.serial.slice('GROUP-'.length)}`);
    });

    it('gives one of 20 grouped generates of one serial the code and the others DUPLICATE_SERIAL, with one event', async () => {
      const withGroups = grouped();
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          generateCodes(withGroups, brand, [{ gtin, serialNumber: i % 2 ? 'GRACE-1' : `GRACE-FREE-${i}` }], 0, `req-grace-${i}`),
        ),
      );
      const codes = outcomes.map((outcome, i) => [i % 2 ? 'taken' : 'free', errorCodes(outcome)[0]]);
      expect(codes.filter(([kind]) => kind === 'free').every(([, code]) => code === 'ok')).toBe(true);
      expect(
        codes
          .filter(([kind]) => kind === 'taken')
          .map(([, code]) => code)
          .sort(),
      ).toEqual(['ok', ...Array.from({ length: 9 }, () => 'DUPLICATE_SERIAL')].sort());
      expect(await codeRows('GRACE-1')).toBe(1);
      expect(await codeEvents('GRACE-1')).toBe(1);
      expect(await codeRows('GRACE-FREE-')).toBe(10);
    });

    it('fails only the request whose write fails, not the others sharing its transaction', async () => {
      const { db } = database;
      await db.query(`CREATE OR REPLACE FUNCTION refuse_write() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'refused by the test'; END $$`);
      // The code's event goes in a pack with the others of its group (event store migration 0003),
      // or is a row when its group is itself alone: the pack or the row that holds it is refused.
      await db.query(
        `CREATE TRIGGER refuse_bad BEFORE INSERT ON event_packs FOR EACH ROW
         WHEN (NEW.events @> '[{"data": {"serial": "GBAD-7"}}]') EXECUTE FUNCTION refuse_write()`,
      );
      await db.query(
        `CREATE TRIGGER refuse_bad BEFORE INSERT ON events FOR EACH ROW WHEN (NEW.data->>'serial' = 'GBAD-7') EXECUTE FUNCTION refuse_write()`,
      );
      try {
        const withGroups = grouped();
        const outcomes = await Promise.allSettled(
          Array.from({ length: 30 }, (_, i) =>
            generateCodes(withGroups, brand, [{ gtin, serialNumber: `GBAD-${i}` }], 0, `req-gbad-${i}`),
          ),
        );
        expect(outcomes.map((outcome) => outcome.status)).toEqual(
          Array.from({ length: 30 }, (_, i) => (i === 7 ? 'rejected' : 'fulfilled')),
        );
        for (const outcome of outcomes) if (outcome.status === 'fulfilled') expect(errorCodes(outcome.value)).toEqual(['ok']);
      } finally {
        for (const table of ['event_packs', 'events']) await db.query(`DROP TRIGGER refuse_bad ON ${table}`);
      }
      expect(await codeRows('GBAD-')).toBe(29);
      expect(await codeEvents('GBAD-')).toBe(29);
    });
  });

  it('answers a retry its own code, not DUPLICATE_SERIAL, when the first attempt with its Idempotency-Key commits while it waits', async () => {
    // The first attempt's commit outlives the gateway's RPC timeout (a trigger holds it 1.5 s after
    // its code rows are in), so the gateway answered 503 and released the key, and the client
    // retried: the retry found nothing stored yet, then waited on the first's rows and inserted none.
    const { db } = database;
    await db.query(`CREATE OR REPLACE FUNCTION slow_write() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_sleep(1.5); RETURN NEW; END $$`);
    // The codes' events go in packs (event store migration 0003), or a code alone in a row.
    await db.query(
      `CREATE TRIGGER slow_event BEFORE INSERT ON event_packs FOR EACH ROW
       WHEN (NEW.events::text LIKE '%"serial": "SLOW-%') EXECUTE FUNCTION slow_write()`,
    );
    await db.query(
      `CREATE TRIGGER slow_event BEFORE INSERT ON events FOR EACH ROW WHEN (NEW.data->>'serial' LIKE 'SLOW-%') EXECUTE FUNCTION slow_write()`,
    );
    try {
      for (const [label, withDeps] of [
        ['a batch chunk', deps],
        ['a grouped generate', { ...deps, groupCommit: createGroupCommit(deps) }],
      ] as const) {
        const items = Array.from({ length: label === 'a batch chunk' ? 3 : 1 }, (_, i) => ({
          gtin,
          serialNumber: `SLOW-${label.length}-${i}`,
        }));
        const key = `scoped-idempotency-key-${label}`;
        const first = generateCodes(withDeps, brand, items, 0, `req-slow-${label}`, key);
        await new Promise((resolve) => setTimeout(resolve, 400));
        const retry = generateCodes(withDeps, brand, items, 0, `req-slow-${label}-retry`, key);
        const [firstAnswer, retryAnswer] = await Promise.all([first, retry]);
        expect(errorCodes(firstAnswer), label).toEqual(items.map(() => 'ok'));
        expect(errorCodes(retryAnswer), label).toEqual(items.map(() => 'ok'));
        // The same codes, stored once each with one event.
        const assetIds = ({ results }: GeneratedCodes) => results.map((result) => ('code' in result ? result.code.assetId : ''));
        expect(assetIds(retryAnswer)).toEqual(assetIds(firstAnswer));
        // The retry says its codes were the first attempt's: the gateway gives back the quota it spent again.
        expect([firstAnswer.madeBefore, retryAnswer.madeBefore], label).toEqual([0, items.length]);
        expect(await codeRows(`SLOW-${label.length}-`)).toBe(items.length);
        expect(await codeEvents(`SLOW-${label.length}-`)).toBe(items.length);
      }
    } finally {
      for (const table of ['event_packs', 'events']) await db.query(`DROP TRIGGER slow_event ON ${table}`);
    }
  });

  it("hands the event loop a turn every 50 items of a large request, so other requests' work runs between", async () => {
    // Counts turns of the event loop (check phases) while the request runs.
    let turns = 0;
    let counting = true;
    const tick = () => {
      if (!counting) return;
      turns += 1;
      setImmediate(tick);
    };
    setImmediate(tick);
    // The turn in which each item's signer was asked for (once an item, in order).
    const askedInTurn: number[] = [];
    const watched: GenerateDeps = {
      ...deps,
      signers: {
        signerOf: (environment, itemGtin) => {
          askedInTurn.push(turns);
          return deps.signers.signerOf(environment, itemGtin);
        },
      },
    };
    const items = Array.from({ length: 200 }, (_, i) => ({ gtin, serialNumber: `TURNS-${i}` }));
    const outcome = await generateCodes(watched, brand, items, 0, 'req-turns').finally(() => {
      counting = false;
    });
    expect(errorCodes(outcome).every((code) => code === 'ok')).toBe(true);
    expect(askedInTurn).toHaveLength(200);
    // The first ask may wait for the database; from the second on the signer is cached, so only
    // the request's own turns separate them: items 1-49, 50-99, 100-149 and 150-199.
    expect(new Set(askedInTurn.slice(1)).size).toBeGreaterThanOrEqual(4);
  });

  it('stores no schema, version or deletion whose event cannot be written', async () => {
    const schemaRows = async () =>
      (
        await database.db.query<{ id: string; current_version: number; deleted: boolean }>(
          'SELECT id, current_version, deleted_at IS NOT NULL AS deleted FROM metadata_schemas WHERE account_id = $1',
          [brand.accountId],
        )
      ).map((row) => [row.id, Number(row.current_version), row.deleted]);
    const schemaEvents = async (type: string) =>
      Number(
        (await database.db.query<{ n: string }>('SELECT count(*)::text AS n FROM event_log WHERE event_type = $1', [type]))[0]?.n,
      );

    let drop = await refuse('schema.created');
    await expect(schemas.create(brand, { copyFrom: 'tpl_luxury_goods' })).rejects.toThrow();
    await drop();
    expect(await schemaRows()).toEqual([]);

    const created = await schemas.create(brand, { copyFrom: 'tpl_luxury_goods' });
    drop = await refuse('schema.updated');
    await expect(schemas.update(brand, created.id, { name: 'Renamed' })).rejects.toThrow();
    await drop();
    expect(await schemaRows()).toEqual([[created.id, 1, false]]);
    expect((await schemas.get(brand, created.id)).name).toBe(created.name);
    expect(await schemaEvents('schema.updated')).toBe(0);

    drop = await refuse('schema.deleted');
    await expect(schemas.remove(brand, created.id)).rejects.toThrow();
    await drop();
    expect(await schemaRows()).toEqual([[created.id, 1, false]]);
    expect(await schemaEvents('schema.deleted')).toBe(0);

    await schemas.update(brand, created.id, { name: 'Renamed' });
    await schemas.remove(brand, created.id);
    expect(await schemaRows()).toEqual([[created.id, 2, true]]);
    expect([
      await schemaEvents('schema.created'),
      await schemaEvents('schema.updated'),
      await schemaEvents('schema.deleted'),
    ]).toEqual([1, 1, 1]);
  });

  it('lands racing updates of a schema one after the other, each version with its event', async () => {
    const created = await schemas.create(brand, { copyFrom: 'tpl_luxury_goods' });
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => schemas.update(brand, created.id, { name: `Racer ${i}` })),
    );
    expect(answers.map((answer) => answer.version).sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
    const events = await database.db.query<{ version: number }>(
      `SELECT (data->>'version')::int AS version FROM event_log WHERE event_type = 'schema.updated' AND data->>'schemaId' = $1
       ORDER BY global_position`,
      [created.id],
    );
    expect(events.map((event) => event.version)).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
    expect((await schemas.get(brand, created.id)).version).toBe(9);
  });
});
