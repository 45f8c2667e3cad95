import { createInProcessBus } from '@hallmark/bus';
import type { Principal } from '@hallmark/contracts';
import { createSqlEventStore, type EventStore } from '@hallmark/event-store';
import { assetStream, startAssetHistory } from '@hallmark/provenance';
import { connectTestDatabase, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateVerifyService } from '../migrations.ts';
import { createCodeBlocks, decideCodeReport } from './report-code.ts';

// A report's decision is stored with its event in the code's history, or not at all (#17: no
// hand-written undo). The event's insert is refused by a trigger, and so is the undo that used to
// set the report back to pending (what a process killed in between does: the undo never runs).
describe('report decisions and their events, against PostgreSQL', () => {
  let database: { db: SqlDatabase; drop(): Promise<void> };
  let eventStore: EventStore;
  const owner: Principal = { accountId: 'acc_reports_brand', environment: 'live' };
  const now = new Date('2026-11-25T10:00:00Z');
  const client = { keyId: 'key_brand', address: '127.0.0.1' };
  let deps: Parameters<typeof decideCodeReport>[0];

  beforeAll(async () => {
    database = await connectTestDatabase('report_writes');
    await migrateVerifyService(database.db);
    eventStore = await createSqlEventStore(database.db);
    deps = { db: database.db, eventStore, blocks: createCodeBlocks(database.db), bus: createInProcessBus(), clock: () => now };
  });

  afterAll(async () => {
    await eventStore?.close();
    await database?.drop();
  });

  /** A code with its history, and a pending report of it. */
  async function reported(name: string): Promise<{ reportId: string; assetId: string }> {
    const assetId = `code_${name}`;
    await eventStore.startStreams([
      startAssetHistory(
        { assetId, owner },
        [{ type: 'code.generated', data: { gtin: '09506000134352', serial: name } }],
        now.toISOString(),
      ),
    ]);
    const reportId = `rep_${name}`;
    await database.db.query(
      `INSERT INTO code_reports (report_id, owner_account_id, environment, gtin, serial, asset_id, reason, source,
                                 reporter_account_id, reported_by_key, reported_at, status)
       VALUES ($1, $2, 'live', '09506000134352', $3, $4, 'looks fake', 'api', 'acc_retailer', 'key_retailer', $5, 'pending')`,
      [reportId, owner.accountId, name, assetId, now],
    );
    return { reportId, assetId };
  }

  const statusOf = async (reportId: string) =>
    (await database.db.query<{ status: string }>('SELECT status FROM code_reports WHERE report_id = $1', [reportId]))[0]?.status;
  const decisionsIn = async (assetId: string) =>
    (await eventStore.readStream(assetStream(assetId))).map((event) => event.type).filter((type) => type !== 'code.generated');

  it('stores no decision whose event cannot be written, even if the process dies before any undo', async () => {
    const { reportId, assetId } = await reported('CUT1');
    const { db } = database;
    await db.query(`CREATE OR REPLACE FUNCTION refuse_write() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'refused by the test'; END $$`);
    await db.query(
      `CREATE TRIGGER refuse_event BEFORE INSERT ON events FOR EACH ROW WHEN (NEW.event_type = 'code.report-dismissed')
       EXECUTE FUNCTION refuse_write()`,
    );
    await db.query(
      `CREATE TRIGGER refuse_undo BEFORE UPDATE ON code_reports FOR EACH ROW WHEN (NEW.status = 'pending')
       EXECUTE FUNCTION refuse_write()`,
    );
    try {
      await expect(
        decideCodeReport(deps, { principal: owner, client, reportId, decision: 'dismiss', body: {} }, 'req-cut'),
      ).rejects.toThrow();
    } finally {
      await db.query('DROP TRIGGER refuse_event ON events');
      await db.query('DROP TRIGGER refuse_undo ON code_reports');
    }
    expect(await statusOf(reportId)).toBe('pending');
    expect(await decisionsIn(assetId)).toEqual([]);

    const decided = await decideCodeReport(
      deps,
      { principal: owner, client, reportId, decision: 'dismiss', body: { reason: 'our own test scan' } },
      'req',
    );
    expect(decided).toMatchObject({ status: 'dismissed', dismissReason: 'our own test scan', blockReason: null });
    expect(await decisionsIn(assetId)).toEqual(['code.report-dismissed']);
  });

  it('lets one of two racing decisions win, and records only that one', async () => {
    const { reportId, assetId } = await reported('RACE1');
    const outcomes = await Promise.allSettled(
      (['confirm', 'dismiss', 'confirm', 'dismiss'] as const).map((decision, i) =>
        decideCodeReport(deps, { principal: owner, client, reportId, decision, body: { reason: 'fake' } }, `req-${i}`),
      ),
    );
    const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') expect(outcome.reason).toMatchObject({ code: 'CONFLICT' });
    }
    const status = await statusOf(reportId);
    expect(await decisionsIn(assetId)).toEqual([status === 'confirmed' ? 'code.report-confirmed' : 'code.report-dismissed']);
  });

  it('answers NOT_FOUND for another account’s report, and CONFLICT for a decided one', async () => {
    const { reportId } = await reported('OWN1');
    await expect(
      decideCodeReport(
        deps,
        { principal: { accountId: 'acc_other', environment: 'live' }, client, reportId, decision: 'confirm', body: {} },
        'r',
      ),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const confirmed = await decideCodeReport(
      deps,
      { principal: owner, client, reportId, decision: 'confirm', body: { reason: 'counterfeit seen in market' } },
      'r',
    );
    expect(confirmed).toMatchObject({ status: 'confirmed', blockReason: 'counterfeit seen in market' });
    expect(deps.blocks.find('live', '09506000134352', 'OWN1', owner.accountId)).toMatchObject({
      reason: 'counterfeit seen in market',
    });
    await expect(
      decideCodeReport(deps, { principal: owner, client, reportId, decision: 'dismiss', body: {} }, 'r'),
    ).rejects.toMatchObject({ code: 'CONFLICT', details: { status: 'confirmed' } });
  });
  it('lifts a confirmed report’s block: the code is unblocked, the lift is in its history, and only a confirmed report can be lifted', async () => {
    const { reportId, assetId } = await reported('LIFT1');
    const lift = (id: string, principal: Principal = owner) =>
      decideCodeReport(
        deps,
        { principal, client, reportId: id, decision: 'lift', body: { reason: 'confirmed the wrong code' } },
        'r',
      );
    // A pending report has no block to lift.
    await expect(lift(reportId)).rejects.toMatchObject({ code: 'CONFLICT', details: { status: 'pending' } });
    await decideCodeReport(deps, { principal: owner, client, reportId, decision: 'confirm', body: { reason: 'fake' } }, 'r');
    expect(deps.blocks.find('live', '09506000134352', 'LIFT1', owner.accountId)).toBeDefined();
    // Another account cannot tell it exists.
    await expect(lift(reportId, { accountId: 'acc_other', environment: 'live' })).rejects.toMatchObject({ code: 'NOT_FOUND' });

    const lifted = await lift(reportId);
    expect(lifted).toMatchObject({
      status: 'lifted',
      liftReason: 'confirmed the wrong code',
      liftedAt: now.toISOString(),
      decidedAt: now.toISOString(),
      blockReason: null,
    });
    expect(deps.blocks.find('live', '09506000134352', 'LIFT1', owner.accountId)).toBeUndefined();
    expect(await decisionsIn(assetId)).toEqual(['code.report-confirmed', 'code.report-lifted']);
    const [liftEvent] = (await eventStore.readStream(assetStream(assetId))).slice(-1);
    expect(liftEvent?.data).toEqual({
      reportId,
      gtin: '09506000134352',
      serial: 'LIFT1',
      reason: 'confirmed the wrong code',
      liftedBy: client.keyId,
    });
    // Lifted once: a second lift, a confirmation or a dismissal of it is a conflict that stores nothing.
    await expect(lift(reportId)).rejects.toMatchObject({ code: 'CONFLICT', details: { status: 'lifted' } });
    await expect(
      decideCodeReport(deps, { principal: owner, client, reportId, decision: 'confirm', body: {} }, 'r'),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(await decisionsIn(assetId)).toEqual(['code.report-confirmed', 'code.report-lifted']);
  });

  it('keeps a code blocked after a lift while another confirmed report of it stands, on this replica and on one that hears the broadcast', async () => {
    const first = await reported('LIFT2');
    const secondId = 'rep_LIFT2_again';
    await database.db.query(
      `INSERT INTO code_reports (report_id, owner_account_id, environment, gtin, serial, asset_id, reason, source,
                                 reporter_account_id, reported_by_key, reported_at, status)
       VALUES ($1, $2, 'live', '09506000134352', 'LIFT2', $3, 'same again', 'resolver', NULL, 'public-resolver', $4, 'pending')`,
      [secondId, owner.accountId, first.assetId, now],
    );
    // A second replica: its own blocks, following the same bus.
    const replica = createCodeBlocks(database.db);
    const started = await replica.start(deps.bus);
    try {
      for (const [id, reason] of [
        [first.reportId, 'first, confirmed'],
        [secondId, 'second, confirmed'],
      ] as const)
        await decideCodeReport(deps, { principal: owner, client, reportId: id, decision: 'confirm', body: { reason } }, 'r');
      await decideCodeReport(deps, { principal: owner, client, reportId: first.reportId, decision: 'lift', body: {} }, 'r');
      expect(deps.blocks.find('live', '09506000134352', 'LIFT2', owner.accountId)).toMatchObject({ reason: 'second, confirmed' });
      await decideCodeReport(deps, { principal: owner, client, reportId: secondId, decision: 'lift', body: {} }, 'r');
      expect(deps.blocks.find('live', '09506000134352', 'LIFT2', owner.accountId)).toBeUndefined();
      const deadline = Date.now() + 5_000;
      while (replica.find('live', '09506000134352', 'LIFT2', owner.accountId) && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(replica.find('live', '09506000134352', 'LIFT2', owner.accountId)).toBeUndefined();
    } finally {
      await started.stop();
    }
  });
  it('keeps a lifted block lifted when an older read of the blocks ends last, or the block’s broadcast arrives after the lift’s', async () => {
    const { reportId } = await reported('LIFT3');
    await decideCodeReport(deps, { principal: owner, client, reportId, decision: 'confirm', body: {} }, 'r');
    // A replica whose reads of the blocks can be held: the first read starts while the report is
    // still confirmed and ends only after the lift's own read.
    let hold: Promise<void> | undefined;
    const held: SqlDatabase = {
      ...database.db,
      async query<Row>(text: string, params?: readonly unknown[]) {
        const gate = /FROM code_reports\s+WHERE status = 'confirmed'/.test(text) ? hold : undefined;
        const rows = await database.db.query<Row>(text, params);
        if (gate) await gate;
        return rows;
      },
    };
    const replica = createCodeBlocks(held);
    let release!: () => void;
    hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    const older = replica.reload();
    hold = undefined;
    const bus = createInProcessBus();
    const replicaDeps = { ...deps, blocks: replica, bus };
    await decideCodeReport(replicaDeps, { principal: owner, client, reportId, decision: 'lift', body: {} }, 'r');
    expect(replica.find('live', '09506000134352', 'LIFT3', owner.accountId)).toBeUndefined();
    release();
    await older;
    expect(replica.find('live', '09506000134352', 'LIFT3', owner.accountId)).toBeUndefined();
    // The confirmation's broadcast, arriving only now, blocks nothing.
    replica.add({
      reportId,
      environment: 'live',
      gtin: '09506000134352',
      serial: 'LIFT3',
      ownerAccountId: owner.accountId,
      reason: 'late',
      confirmedAt: now.toISOString(),
    });
    expect(replica.find('live', '09506000134352', 'LIFT3', owner.accountId)).toBeUndefined();
  });
});
