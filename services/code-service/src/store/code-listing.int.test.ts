import { migrateAccounts } from '@hallmark/accounts';
import type { CodeListItem, ListCodesQuery, Principal } from '@hallmark/contracts';
import { uuidV7 } from '@hallmark/crypto';
import { connectTestDatabase, type SqlDatabase, type SqlExecutor } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listOwnCodes } from './code-listing.ts';
import { findAccountsCodeOfItem, insertCodes, migrateCodes, type StoredCode } from './code-store.ts';
import { type LinkForm, linkOfCode, type StoredLinkForm, storeLinkForm } from './link-forms.ts';

// GET /codes reads an account's codes newest first through the indexes of migration 0007: every page
// in order, each read along its filter's index from the cursor on, without sorting the account's
// codes, so a page costs about `limit` index entries however deep it is.
describe('the codes listing and its indexes, on codes stored as generate requests store them', () => {
  let database: { db: SqlDatabase; drop(): Promise<void> };
  const owner: Principal = { accountId: 'acc_listing_owner', environment: 'live' };
  const gtins = ['09506000134352', '09506000134369', '04006381333931'];
  const requests = 24;
  const perRequest = 500;
  const stored: StoredCode[] = [];

  const form: LinkForm = { origin: 'https://id.example.com', order: 'spec' };
  let storedForm: StoredLinkForm | undefined;
  /**
   * One request's codes as generateCodes makes them: one time, asset ids in item order, rows in serial
   * order (codesInsert); every other request's rows name their link form (migration 0009).
   */
  const request = (who: Principal, number: number, at: Date): StoredCode[] =>
    Array.from({ length: perRequest }, (_, item) => ({
      assetId: `code_${uuidV7(at.getTime()).replaceAll('-', '')}`,
      owner: who,
      kid: 'kid-1',
      createdAt: at,
      gtin: gtins[number % gtins.length] as string,
      serial: `S${number}-${item}`,
      batch: number % 3 === 0 ? null : `L${number % 4}`,
      expiry: null,
      signature: 'A'.repeat(86),
      url: linkOfCode(
        {
          gtin: gtins[number % gtins.length] as string,
          serial: `S${number}-${item}`,
          batch: number % 3 === 0 ? null : `L${number % 4}`,
          expiry: null,
          signature: 'A'.repeat(86),
        },
        form,
      ),
      linkForm: number % 2 === 0 ? storedForm : undefined,
      metadata: {},
      expiresAt: null,
    }));

  beforeAll(async () => {
    database = await connectTestDatabase('code_listing');
    await migrateAccounts(database.db);
    await migrateCodes(database.db);
    storedForm = await storeLinkForm(database.db, form);
    const start = Date.parse('2026-12-01T10:00:00Z');
    for (let number = 0; number < requests; number++) {
      const codes = request(owner, number, new Date(start + number * 1_000));
      stored.push(...codes);
      // Another tenant's and the other environment's requests in between, never listed.
      const others = [
        ...request({ accountId: 'acc_listing_other', environment: 'live' }, number, new Date(start + number * 1_000 + 1)),
        ...request({ ...owner, environment: 'test' }, number, new Date(start + number * 1_000 + 2)),
      ];
      await insertCodes(database.db, codes, { onlyCurrentSigners: false });
      if (number % 4 === 0) await insertCodes(database.db, others, { onlyCurrentSigners: false });
    }
    await database.db.query('ANALYZE codes');
  });
  afterAll(async () => {
    await database.drop();
  });

  const newestFirst = (codes: StoredCode[]) =>
    [...codes]
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.assetId < b.assetId ? 1 : -1))
      .map((code) => code.assetId);

  /** Every page of a query, and the statements listOwnCodes sent for them. */
  const allPages = async (query: ListCodesQuery) => {
    const statements: Array<{ text: string; params: readonly unknown[] }> = [];
    const recording: SqlExecutor = {
      query: (text, params = []) => {
        statements.push({ text, params });
        return database.db.query(text, params);
      },
      execScript: (sql) => database.db.execScript(sql),
    };
    const listed: CodeListItem[] = [];
    let cursor: string | undefined;
    do {
      const page = await listOwnCodes(recording, owner, { ...query, ...(cursor ? { cursor } : {}) });
      listed.push(...page.data);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    return { listed, statements };
  };

  /** The plan PostgreSQL runs for a statement, with what each step read. */
  const planOf = async ({ text, params }: { text: string; params: readonly unknown[] }) => {
    const [row] = await database.db.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${text}`,
      params,
    );
    return row?.['QUERY PLAN'][0]?.Plan as PlanNode;
  };
  interface PlanNode {
    'Node Type': string;
    'Index Name'?: string;
    'Scan Direction'?: string;
    'Actual Rows': number;
    'Index Cond'?: string;
    'Rows Removed by Filter'?: number;
    Plans?: PlanNode[];
  }
  const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

  it.each([
    { filter: 'no filter', query: {}, index: 'codes_by_owner', matches: () => true },
    {
      filter: 'a GTIN',
      query: { gtin: gtins[1] },
      index: 'codes_by_owner_gtin',
      matches: (code: StoredCode) => code.gtin === gtins[1],
    },
    {
      filter: 'a batch',
      query: { batch: 'L2' },
      index: 'codes_by_owner_batch',
      matches: (code: StoredCode) => code.batch === 'L2',
    },
  ])(
    'lists every code of $filter newest first, each page read along $index from its cursor, about a page of entries',
    async ({ query, index, matches }) => {
      // When the owner pages through them, 200 a page
      const { listed, statements } = await allPages({ ...query, limit: 200 });

      // Then every matching code of the owner comes once, newest first, and no one else's
      const expected = newestFirst(stored.filter(matches));
      expect(expected.length).toBeGreaterThanOrEqual(2_000);
      expect(listed.map((code) => code.assetId)).toEqual(expected);
      // with its link as issued, stored whole or as its form
      const linkOf = new Map(stored.map((code) => [code.assetId, code.url]));
      expect(listed.filter((code) => code.url !== linkOf.get(code.assetId))).toEqual([]);

      // And a page deep in the list reads its index from the cursor on: no sort, a page's rows
      const deep = statements[Math.floor(statements.length / 2)] as { text: string; params: readonly unknown[] };
      const nodes = nodesOf(await planOf(deep));
      expect(nodes.map((node) => node['Node Type'])).not.toContain('Sort');
      const scan = nodes.find((node) => node['Index Name'] !== undefined);
      expect(scan).toMatchObject({ 'Node Type': 'Index Scan', 'Index Name': index, 'Scan Direction': 'Backward' });
      // (the cursor is where the scan starts, not a filter over the rows before it)
      expect(scan?.['Index Cond']).toMatch(/ROW\(created_at, asset_id\) < ROW\(/);
      expect(scan?.['Rows Removed by Filter'] ?? 0).toBe(0);
      expect(scan?.['Actual Rows']).toBeLessThanOrEqual(201);
    },
  );

  it('lists the codes of a serial and finds the signer’s code of an item along the one item index, reading only the owner’s entries', async () => {
    // Given a serial that another tenant and the owner's test environment used too (same GTIN)
    const serial = 'S4-7';
    expect(stored.filter((code) => code.serial === serial)).toHaveLength(1);

    // When the owner lists that serial
    const { listed, statements } = await allPages({ serial, limit: 50 });

    // Then only the owner's code comes, read along codes_item_owner_key by environment, serial and account
    expect(listed.map((code) => code.assetId)).toEqual(
      stored.filter((code) => code.serial === serial).map((code) => code.assetId),
    );
    const listing = nodesOf(await planOf(statements[0] as { text: string; params: readonly unknown[] }));
    const listingScan = listing.find((node) => node['Index Name'] !== undefined);
    expect(listingScan).toMatchObject({ 'Index Name': 'codes_item_owner_key', 'Actual Rows': 1 });
    expect(listingScan?.['Index Cond']).toMatch(/account_id = /);

    // And the signer's code of the item (findCodes) is one entry of the same index
    const code = stored.find((each) => each.serial === serial) as StoredCode;
    const found = await findAccountsCodeOfItem(database.db, owner.accountId, owner.environment, code.gtin, serial);
    expect(found?.assetId).toBe(code.assetId);
    expect(await findAccountsCodeOfItem(database.db, 'acc_listing_nobody', owner.environment, code.gtin, serial)).toBeUndefined();
    const lookup = nodesOf(
      await planOf({
        text: `SELECT asset_id FROM codes WHERE environment = $1 AND serial = $2 AND account_id = $3 AND gtin = $4`,
        params: [owner.environment, serial, owner.accountId, code.gtin],
      }),
    );
    expect(lookup.find((node) => node['Index Name'] !== undefined)).toMatchObject({
      'Index Name': 'codes_item_owner_key',
      'Actual Rows': 1,
    });

    // And the index holds an owner to one code of an item (the insert's ON CONFLICT finds it)
    const again = await insertCodes(database.db, [{ ...code, assetId: `${code.assetId}x` }], { onlyCurrentSigners: false });
    expect(again.size).toBe(0);
  });
});
