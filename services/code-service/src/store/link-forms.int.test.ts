import { migrateAccounts } from '@hallmark/accounts';
import type { Principal } from '@hallmark/contracts';
import { uuidV7 } from '@hallmark/crypto';
import { connectTestDatabase, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findOwnCode, listOwnCodes } from './code-listing.ts';
import { findAccountsCodeOfItem, findOwnCodesByAssetId, insertCodes, migrateCodes, type StoredCode } from './code-store.ts';
import { createLinkFormSource, type LinkForm, linkOfCode, type StoredLinkForm, storeLinkForm } from './link-forms.ts';

// A row of `codes` names its link form instead of holding its link (migration 0009, issue #19): every
// reader gives back exactly the link POST /code/generate answered, whatever the serial's characters,
// the batch, the expiry and the order; a resolver origin changed later leaves earlier codes' links as
// they were issued; a link the form does not give back exactly is stored whole.

const owner: Principal = { accountId: 'acc_link_forms', environment: 'live' };
const gtin = '09506000134352';
const signature = 'Qx7_-'.repeat(17).slice(0, 86);

let database: { db: SqlDatabase; drop(): Promise<void> };
beforeAll(async () => {
  database = await connectTestDatabase('code_link_forms');
  await migrateAccounts(database.db);
  await migrateCodes(database.db);
});
afterAll(() => database?.drop());

let made = 0;
/** A code as generate makes it: its link written from `form`, stored with `storedAs` (or whole). */
function codeOf(
  fields: { serial: string; batch?: string | null; expiry?: string | null },
  form: LinkForm,
  storedAs: StoredLinkForm | undefined,
): StoredCode {
  made += 1;
  const batch = fields.batch ?? null;
  const expiry = fields.expiry ?? null;
  return {
    assetId: `code_${uuidV7(Date.now() + made).replaceAll('-', '')}`,
    owner,
    kid: 'kid-1',
    createdAt: new Date(Date.parse('2026-12-06T11:00:00Z') + made),
    gtin,
    serial: fields.serial,
    batch,
    expiry,
    signature,
    url: linkOfCode({ gtin, serial: fields.serial, batch, expiry, signature }, form),
    metadata: { n: made },
    expiresAt: null,
    linkForm: storedAs,
  };
}

/** The code's link as every reader of `codes` gives it back. */
async function linksRead(code: StoredCode): Promise<string[]> {
  const { db } = database;
  const byId = (await findOwnCodesByAssetId(db, owner, [code.assetId])).get(code.assetId)?.url;
  const byItem = (await findAccountsCodeOfItem(db, owner.accountId, owner.environment, code.gtin, code.serial))?.url;
  const one = (await findOwnCode(db, owner, code.assetId)).url;
  const listed = (await listOwnCodes(db, owner, { serial: code.serial, limit: 5 })).data.map((each) => each.url);
  return [byId ?? '(none)', byItem ?? '(none)', one, ...listed];
}

describe('link forms (code-service migration 0009)', () => {
  it('stores a link as its form and reads back exactly the link issued, whatever its characters, batch, expiry and order', async () => {
    const forms: LinkForm[] = [
      { origin: 'https://id.brand.example', order: 'spec' },
      { origin: 'https://id.brand.example/', order: 'gs1' },
      { origin: 'http://127.0.0.1:8080', order: 'spec' },
    ];
    const serials = ['SN-1', 'a/b%c!\'()*+,-.:;<=>?_&"', 'ZZ 9', 'Ünï'];
    const codes: StoredCode[] = [];
    for (const form of forms) {
      const stored = await storeLinkForm(database.db, form);
      for (const [index, serial] of serials.entries()) {
        codes.push(
          codeOf(
            {
              serial: `${serial}-${form.order}-${stored.id}`,
              batch: index % 2 === 0 ? `L/${index}%` : index === 1 ? '' : null,
              expiry: index === 3 ? null : '271231',
            },
            form,
            stored,
          ),
        );
      }
    }
    const inserted = await insertCodes(database.db, codes, { onlyCurrentSigners: false });
    expect(inserted.size).toBe(codes.length);
    const rows = await database.db.query<{ asset_id: string; url: string | null; link_form: number | null }>(
      'SELECT asset_id, url, link_form FROM codes WHERE asset_id = ANY($1::text[])',
      [codes.map((code) => code.assetId)],
    );
    expect(rows.filter((row) => row.url !== null || row.link_form === null)).toEqual([]);
    for (const code of codes) expect(await linksRead(code), code.serial).toEqual([code.url, code.url, code.url, code.url]);
  });

  it('keeps an earlier code’s link as issued when the resolver origin changes', async () => {
    const before = await storeLinkForm(database.db, { origin: 'https://old.brand.example', order: 'spec' });
    const after = await storeLinkForm(database.db, { origin: 'https://new.brand.example', order: 'spec' });
    expect(after.id).not.toBe(before.id);
    const old = codeOf({ serial: 'MOVED-1' }, before, before);
    const current = codeOf({ serial: 'MOVED-2' }, after, after);
    await insertCodes(database.db, [old, current], { onlyCurrentSigners: false });
    expect((await linksRead(old))[0]).toBe(`https://old.brand.example/01/${gtin}/21/MOVED-1?sig=${signature}`);
    expect((await linksRead(current))[0]).toBe(`https://new.brand.example/01/${gtin}/21/MOVED-2?sig=${signature}`);
  });

  it('stores whole a link its form does not give back, and one stored without a form (rows from before 0009)', async () => {
    const form = await storeLinkForm(database.db, { origin: 'https://id.brand.example', order: 'spec' });
    const odd = {
      ...codeOf({ serial: 'ODD-1' }, form, form),
      url: `https://elsewhere.example/01/${gtin}/21/ODD-1?sig=${signature}`,
    };
    const whole = codeOf({ serial: 'WHOLE-1' }, form, undefined);
    await insertCodes(database.db, [odd, whole], { onlyCurrentSigners: false });
    const rows = await database.db.query<{ serial: string; url: string | null; link_form: number | null }>(
      `SELECT serial, url, link_form FROM codes WHERE serial IN ('ODD-1', 'WHOLE-1') ORDER BY serial`,
    );
    expect(rows).toEqual([
      { serial: 'ODD-1', url: odd.url, link_form: null },
      { serial: 'WHOLE-1', url: whole.url, link_form: null },
    ]);
    expect(await linksRead(odd)).toEqual([odd.url, odd.url, odd.url, odd.url]);
    expect(await linksRead(whole)).toEqual([whole.url, whole.url, whole.url, whole.url]);
    // A row with neither is refused by the table.
    await expect(database.db.query(`UPDATE codes SET url = NULL WHERE serial = 'WHOLE-1'`)).rejects.toThrow(
      /codes_url_or_link_form/,
    );
  });

  it('gives every replica asking at once the same form id, and no form while the gate is shut', async () => {
    const form: LinkForm = { origin: 'https://race.brand.example', order: 'gs1' };
    const ids = await Promise.all(Array.from({ length: 8 }, () => storeLinkForm(database.db, form).then((stored) => stored.id)));
    expect(new Set(ids).size).toBe(1);
    let open = false;
    const source = createLinkFormSource(database.db, form, { links: async () => open, keys: async () => false });
    expect(await source('kid-1')).toBeUndefined();
    open = true;
    expect(await source('kid-1')).toEqual({ ...form, kid: null, id: ids[0] });
  });
});

describe('signing key forms (code-service migration 0010)', () => {
  /** What the rows hold and what every reader answers of each code's key id. */
  async function keysOf(codes: readonly StoredCode[]) {
    const { db } = database;
    const rows = await db.query<{ asset_id: string; kid: string | null }>(
      'SELECT asset_id, kid FROM codes WHERE asset_id = ANY($1::text[])',
      [codes.map((code) => code.assetId)],
    );
    const stored = new Map(rows.map((row) => [row.asset_id, row.kid]));
    const byId = await findOwnCodesByAssetId(
      db,
      owner,
      codes.map((code) => code.assetId),
    );
    return Promise.all(
      codes.map(async (code) => ({
        stored: stored.get(code.assetId),
        byId: byId.get(code.assetId)?.kid,
        byItem: (await findAccountsCodeOfItem(db, owner.accountId, owner.environment, code.gtin, code.serial))?.kid,
      })),
    );
  }

  it('leaves out a key id the form names, and every reader gives it back; a form of another key leaves it whole', async () => {
    const form: LinkForm = { origin: 'https://keys.brand.example', order: 'spec' };
    const withKey = await storeLinkForm(database.db, { ...form, kid: 'kid-1' });
    const otherKey = await storeLinkForm(database.db, { ...form, kid: 'kid-2' });
    const withoutKey = await storeLinkForm(database.db, form);
    expect(new Set([withKey.id, otherKey.id, withoutKey.id]).size).toBe(3);
    const codes = [
      codeOf({ serial: 'KEYED-1' }, form, withKey),
      codeOf({ serial: 'KEYED-2', batch: 'L1', expiry: '271231' }, form, withKey),
      codeOf({ serial: 'KEYED-3' }, form, otherKey),
      codeOf({ serial: 'KEYED-4' }, form, withoutKey),
    ];
    await insertCodes(database.db, codes, { onlyCurrentSigners: false });
    expect(await keysOf(codes)).toEqual([
      { stored: null, byId: 'kid-1', byItem: 'kid-1' },
      { stored: null, byId: 'kid-1', byItem: 'kid-1' },
      { stored: 'kid-1', byId: 'kid-1', byItem: 'kid-1' },
      { stored: 'kid-1', byId: 'kid-1', byItem: 'kid-1' },
    ]);
    for (const code of codes) expect(await linksRead(code), code.serial).toEqual([code.url, code.url, code.url, code.url]);
    // A row with neither its key id nor a form is refused by the table.
    await expect(
      database.db.query(`UPDATE codes SET kid = NULL, link_form = NULL, url = 'x' WHERE serial = 'KEYED-3'`),
    ).rejects.toThrow(/codes_kid_or_link_form/);
  });

  it('names the key in the form only while the key gate is open, a form for each key, one id for every replica asking', async () => {
    const form = { origin: 'https://gated-keys.brand.example', order: 'gs1' as const };
    let keys = false;
    const source = createLinkFormSource(database.db, form, { links: async () => true, keys: async () => keys });
    const plain = await source('kid-a');
    expect(plain).toMatchObject({ kid: null });
    keys = true;
    const [a, b, againA] = await Promise.all([source('kid-a'), source('kid-b'), source('kid-a')]);
    expect(a).toMatchObject({ kid: 'kid-a' });
    expect(b).toMatchObject({ kid: 'kid-b' });
    expect(againA).toEqual(a);
    expect(new Set([plain?.id, a?.id, b?.id]).size).toBe(3);
    const racing = await Promise.all(
      Array.from({ length: 8 }, () => storeLinkForm(database.db, { ...form, kid: 'kid-c' }).then((stored) => stored.id)),
    );
    expect(new Set(racing).size).toBe(1);
  });
});
