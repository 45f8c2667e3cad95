import { randomUUID } from 'node:crypto';
import { createNatsBus, deleteNamespaceStreams } from '@hallmark/bus';
import { connectTestDatabase, createPostgresDatabase, createTestDatabase, runMigrations, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadVerifyServiceMigrations, migrateVerifyService } from './migrations.ts';
import { projectScanHistory, type ScanRecorded, type ScansRecorded, scanRecordedSubject } from './scan-history.ts';

const servers = process.env.HALLMARK_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const prefix = `scans_${randomUUID().slice(0, 8)}`;
let database: { db: SqlDatabase; drop(): Promise<void> };

beforeAll(async () => {
  database = await connectTestDatabase('scans');
  await migrateVerifyService(database.db);
});
afterAll(async () => {
  await database.drop();
  await deleteNamespaceStreams(servers, prefix);
});

describe('scan history projection (NATS JetStream → PostgreSQL)', () => {
  it('writes every scan once, in batches, even when events arrive twice', async () => {
    const bus = await createNatsBus({ servers, name: 'scan-history-test', prefix });
    const statements: number[] = [];
    const counting = {
      ...database.db,
      query: async <Row>(text: string, params?: readonly unknown[]) => {
        statements.push(JSON.parse(String(params?.[0] ?? '[]')).length);
        return database.db.query<Row>(text, params);
      },
    };
    const scans: ScanRecorded[] = Array.from({ length: 1_200 }, (_, i) => ({
      scanId: randomUUID(),
      environment: 'live',
      gtin: '09506000134352',
      serial: 'HIST-1',
      verdict: 'AUTHENTIC',
      riskIndicators: i % 100 === 0 ? ['EXCESSIVE_SCANS'] : [],
      scanNumber: i + 1,
      at: new Date(Date.UTC(2026, 10, 21, 12, 0, 0, i)).toISOString(),
      verifiedBy: 'acc_test',
      ...(i % 2 ? { location: { latitude: 48.85, longitude: 2.35 } } : {}),
    }));
    // Events of 1 to 20 scans, as the scan publisher makes them; the last scans one per event, as
    // events written before scans were batched carry them.
    const events: Array<ScansRecorded | ScanRecorded> = [];
    for (let at = 0; at < 1_100; at += 1 + (at % 20))
      events.push({ scans: scans.slice(at, Math.min(1_100, at + 1 + (at % 20))) });
    events.push(...scans.slice(1_100));
    await Promise.all(events.map((event) => bus.publishEvent(scanRecordedSubject, event)));
    await bus.publishEvent(scanRecordedSubject, { scans: scans.slice(0, 3) }); // a duplicate delivery
    await bus.publishEvent(scanRecordedSubject, scans[1_150]); // a duplicate delivery
    const projection = await projectScanHistory(bus, counting);
    const deadline = Date.now() + 20_000;
    let count = 0;
    while (count < 1_200 && Date.now() < deadline) {
      count = Number((await database.db.query<{ n: string }>('SELECT count(*) AS n FROM scans'))[0]?.n);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await projection.stop();
    await bus.drain();
    expect(count).toBe(1_200);
    expect(statements.length).toBeLessThan(20);
    const rows = await database.db.query<{ scan_number: number; risk_indicators: string[]; latitude: number | null }>(
      `SELECT scan_number, risk_indicators, latitude FROM scans WHERE scan_number IN (101, 102) ORDER BY scan_number`,
    );
    expect(rows).toEqual([
      { scan_number: 101, risk_indicators: ['EXCESSIVE_SCANS'], latitude: null },
      { scan_number: 102, risk_indicators: [], latitude: 48.85 },
    ]);
  });
});

describe('hourly scan counts on a database whose TimeZone is not whole hours from UTC', () => {
  // initdb takes the machine's zone; in Asia/Kolkata (UTC+05:30) date_trunc('hour', …) without a
  // zone started every hour at :30 UTC (a review of 2026-12-05).
  it('counts a scan in its whole UTC hour, and recounts from the scans the hours an earlier release split', async () => {
    const kolkata = await createTestDatabase('scans_tz');
    const admin = createPostgresDatabase({ connectionString: kolkata.url, maxConnections: 1 });
    await admin.query(`ALTER DATABASE "${kolkata.name}" SET timezone TO 'Asia/Kolkata'`);
    await admin.close();
    const db = createPostgresDatabase({ connectionString: kolkata.url, maxConnections: 2 });
    const bus = await createNatsBus({ servers, name: 'scan-history-tz-test', prefix: `${prefix}_tz` });
    try {
      const migrations = await loadVerifyServiceMigrations();
      const repair = migrations.migrations.findIndex((migration) => migration.name === 'hourly_counts_in_utc_hours');
      expect(repair).toBeGreaterThan(0);
      // Given what the release before this one stored: two scans (10:10 and 10:50 UTC) counted under
      // 09:30 and 10:30 UTC, one in each half-hour-shifted "hour"
      await runMigrations(db, { module: migrations.module, migrations: migrations.migrations.slice(0, repair) });
      for (const [id, at] of [
        ['00000000-0000-4000-8000-000000000001', '2026-12-01T10:10:00Z'],
        ['00000000-0000-4000-8000-000000000002', '2026-12-01T10:50:00Z'],
      ])
        await db.query(
          `INSERT INTO scans (scan_id, environment, gtin, serial, verdict, risk_indicators, scan_number, scanned_at, verified_by,
                              account_id, country)
           VALUES ($1, 'live', '09506000134352', 'TZ', 'AUTHENTIC', '{}', 1, $2, 'acc_tz', 'acc_tz', 'IN')`,
          [id, at],
        );
      await db.query(
        `INSERT INTO scan_counts_hourly (account_id, environment, dimension, hour, value, count) VALUES
           ('acc_tz', 'live', 'verdict', '2026-12-01T09:30:00Z', 'AUTHENTIC', 1),
           ('acc_tz', 'live', 'verdict', '2026-12-01T10:30:00Z', 'AUTHENTIC', 1)`,
      );
      const hours = async () =>
        (
          await db.query<{ dimension: string; hour: Date; value: string; count: string }>(
            `SELECT dimension, hour, value, count FROM scan_counts_hourly WHERE account_id = 'acc_tz' ORDER BY dimension, hour`,
          )
        ).map((row) => [row.dimension, row.hour.toISOString(), row.value, Number(row.count)]);

      // When this release's migrations run, the account's hours are counted again from its scans
      expect(
        await runMigrations(db, { module: migrations.module, migrations: migrations.migrations.slice(0, repair + 1) }),
      ).toEqual([repair + 1]);
      expect(await hours()).toEqual([
        ['country', '2026-12-01T10:00:00.000Z', 'IN', 2],
        ['verdict', '2026-12-01T10:00:00.000Z', 'AUTHENTIC', 2],
      ]);

      // And a scan the projection stores now is counted in its whole UTC hour too
      const projection = await projectScanHistory(bus, db);
      await bus.publishEvent(scanRecordedSubject, {
        scans: [
          {
            scanId: randomUUID(),
            environment: 'live',
            gtin: '09506000134352',
            serial: 'TZ',
            verdict: 'AUTHENTIC',
            riskIndicators: [],
            scanNumber: 3,
            at: '2026-12-01T10:33:35.000Z',
            verifiedBy: 'acc_tz',
            accountId: 'acc_tz',
          },
        ],
      } satisfies ScansRecorded);
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline && JSON.stringify(await hours()).includes('"AUTHENTIC",2')) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await projection.stop();
      expect(await hours()).toEqual([
        ['country', '2026-12-01T10:00:00.000Z', 'IN', 2],
        ['verdict', '2026-12-01T10:00:00.000Z', 'AUTHENTIC', 3],
      ]);
    } finally {
      await bus.drain();
      await deleteNamespaceStreams(servers, `${prefix}_tz`);
      await db.close();
      await kolkata.drop();
    }
  });
});
