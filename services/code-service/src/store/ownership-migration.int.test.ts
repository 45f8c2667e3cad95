import { fileURLToPath } from 'node:url';
import {
  type AccountLogDeps,
  createGtinSigners,
  ensureOperator,
  listGtinClaims,
  migrateAccounts,
  provisionAccount,
} from '@hallmark/accounts';
import { createSqlEventStore } from '@hallmark/event-store';
import { connectTestDatabase, loadMigrations, runMigrations, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listOwnershipConflicts } from './code-store.ts';

// GTIN ownership came after codes (migration 0004 of code-service): existing codes stay valid, and
// GTINs with codes of several accounts are reported for the operator to settle (#16, item 1).
describe('the GTIN ownership migration, on a database that already has codes', () => {
  let database: { db: SqlDatabase; drop(): Promise<void> };
  const folder = fileURLToPath(new URL('../../migrations', import.meta.url));
  const at = new Date('2026-11-20T10:00:00Z');
  let accountLog: AccountLogDeps;
  let operator: string;
  let brand: string;
  let rival: string;
  let sandbox: string;

  const code = (accountId: string, environment: 'live' | 'test', gtin: string, serial: string) =>
    database.db.query(
      `INSERT INTO codes (asset_id, account_id, environment, gtin, serial, kid, signature, url)
       VALUES ($1, $2, $3, $4, $5, 'kid', 'sig', 'https://x.y')`,
      [`code_${accountId}_${environment}_${gtin}_${serial}`, accountId, environment, gtin, serial],
    );

  beforeAll(async () => {
    database = await connectTestDatabase('ownership_migration');
    await migrateAccounts(database.db);
    accountLog = { db: database.db, eventStore: await createSqlEventStore(database.db) };
    const all = await loadMigrations('code-service', folder);
    // The database as it was before ownership: code-service's migrations up to 0003.
    await runMigrations(database.db, { ...all, migrations: all.migrations.filter((migration) => migration.version <= 3) });
    operator = (await ensureOperator(accountLog, `svc_live_${'b'.repeat(64)}`, at)).accountId;
    brand = (await provisionAccount(accountLog, { name: 'Brand', tier: 'enterprise', environment: 'live' }, at)).account.id;
    rival = (await provisionAccount(accountLog, { name: 'Rival', tier: 'free', environment: 'live' }, at)).account.id;
    sandbox = (await provisionAccount(accountLog, { name: 'Sandbox', tier: 'free', environment: 'test' }, at)).account.id;
    await code(brand, 'live', '09506000134352', 'A');
    await code(brand, 'test', '09506000134352', 'B');
    await code(sandbox, 'test', '04006381333931', 'C');
    await code(brand, 'live', '05901234123457', 'D');
    await code(rival, 'live', '05901234123457', 'E');
    await code(operator, 'live', '09506000134369', 'F');
    await code(operator, 'live', '09506000134376', 'G');
    await code(brand, 'live', '09506000134376', 'H');
    await runMigrations(database.db, all);
  });

  afterAll(async () => {
    await database?.drop();
  });

  it('gives a GTIN whose codes are all one tenant’s to that tenant, live when any code is live', async () => {
    const signers = createGtinSigners(database.db);
    expect(await signers.signerOf('live', '09506000134352')).toEqual({ accountId: brand, owned: true });
    expect(await signers.signerOf('test', '09506000134352')).toEqual({ accountId: brand, owned: true });
    expect(await signers.signerOf('test', '04006381333931')).toEqual({ accountId: sandbox, owned: true });
    // A test-only claim gives nothing in live: there the operator signs it.
    expect(await signers.signerOf('live', '04006381333931')).toEqual({ accountId: operator, owned: false });
    const claims = (await listGtinClaims(database.db, brand, { limit: 10 })).claims;
    expect(claims).toEqual([
      expect.objectContaining({ kind: 'gtin', value: '09506000134352', environment: 'live', source: 'migrated' }),
    ]);
  });

  it('leaves the operator’s codes to the operator, and reports GTINs of several accounts instead of choosing', async () => {
    const signers = createGtinSigners(database.db);
    expect(await signers.signerOf('live', '09506000134369')).toEqual({ accountId: operator, owned: false });
    // Codes of two tenants, or of a tenant and the operator: nobody owns it; it is reported.
    expect(await signers.signerOf('live', '05901234123457')).toEqual({ accountId: operator, owned: false });
    expect(await listOwnershipConflicts(database.db)).toEqual([
      { gtin: '05901234123457', accountIds: [brand, rival].sort(), codes: 2 },
      { gtin: '09506000134376', accountIds: [brand, operator].sort(), codes: 2 },
    ]);
  });
});
