import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createNatsBus, deleteNamespaceStreams } from '@hallmark/bus';
import { connectTestDatabase, loadMigrations, runMigrations, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectScanHistory, type ScanRecorded, type ScansRecorded, scanRecordedSubject } from './scan-history.ts';

const servers = process.env.HALLMARK_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const prefix = `scans_${randomUUID().slice(0, 8)}`;
let database: { db: SqlDatabase; drop(): Promise<void> };

beforeAll(async () => {
  database = await connectTestDatabase('scans');
  await runMigrations(
    database.db,
    await loadMigrations('verify-service', fileURLToPath(new URL('../migrations', import.meta.url))),
  );
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
