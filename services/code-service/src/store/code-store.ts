import { fileURLToPath } from 'node:url';
import { claimValuesCovering, gtinSignerSql } from '@hallmark/accounts';
import type { Environment, Principal } from '@hallmark/contracts';
import { loadMigrations, runMigrations, type SqlDatabase, type SqlExecutor } from '@hallmark/sql';
import { linkOfCode, type StoredLinkForm } from './link-forms.ts';

const folder = fileURLToPath(new URL('../../migrations', import.meta.url));

export async function migrateCodes(db: SqlDatabase): Promise<void> {
  await runMigrations(db, await loadMigrations('code-service', folder));
}

export interface OwnershipConflict {
  gtin: string;
  accountIds: string[];
  codes: number;
}

/**
 * GTINs that had codes of several accounts when ownership came in (migration 0004) and that
 * nobody owns yet: only the operator's codes of them verify until the operator grants them.
 */
export async function listOwnershipConflicts(sql: SqlExecutor): Promise<OwnershipConflict[]> {
  const rows = await sql.query<{ gtin: string; account_ids: string[]; codes: string | number }>(
    `SELECT x.gtin, x.account_ids, x.codes FROM gtin_ownership_conflicts x
     WHERE NOT EXISTS (SELECT 1 FROM gtin_claims c WHERE c.revoked_at IS NULL AND c.value = ANY(ARRAY[
       x.gtin, substr(x.gtin, 2, 4), substr(x.gtin, 2, 5), substr(x.gtin, 2, 6), substr(x.gtin, 2, 7), substr(x.gtin, 2, 8),
       substr(x.gtin, 2, 9), substr(x.gtin, 2, 10), substr(x.gtin, 2, 11), substr(x.gtin, 2, 12)]))
     ORDER BY x.gtin`,
  );
  return rows.map((row) => ({ gtin: row.gtin, accountIds: row.account_ids, codes: Number(row.codes) }));
}

/** Says at start, once, how many GTINs still wait for the operator to settle who owns them. */
export async function reportOwnershipConflicts(sql: SqlExecutor, log: { warn(fields: object, message: string): void }) {
  const conflicts = await listOwnershipConflicts(sql);
  if (conflicts.length > 0) {
    log.warn(
      { gtins: conflicts.slice(0, 20).map((conflict) => conflict.gtin), count: conflicts.length },
      'GTINs with codes of several accounts are owned by nobody: only the operator’s codes of them verify; settle with `hallmark gtins conflicts` and `hallmark gtins grant`',
    );
  }
}

export interface CodeRecord {
  assetId: string;
  accountId: string;
  environment: Environment;
  gtin: string;
  serial: string;
  batch: string | null;
  expiry: string | null;
  kid: string;
  signature: string;
  url: string;
  metadata: Record<string, unknown>;
  createdAt: Date;
  expiresAt: Date | null;
}

interface CodeRow extends LinkColumns {
  asset_id: string;
  account_id: string;
  environment: Environment;
  gtin: string;
  serial: string;
  batch: string | null;
  expiry: string | null;
  /** Null where the row's link form names its key (code-service migration 0010). */
  kid: string | null;
  signature: string;
  metadata: Record<string, unknown>;
  created_at: Date | string;
  expires_at: Date | string | null;
}

/** A row of `codes` read with its link form (codeRowsWithLinks): its link whole, or its form's origin and order. */
export interface LinkColumns {
  gtin: string;
  serial: string;
  batch: string | null;
  expiry: string | null;
  signature: string;
  url: string | null;
  form_origin: string | null;
  form_order: 'spec' | 'gs1' | null;
  form_kid: string | null;
}

/** `codes` as `c` with the columns of its link form (LinkColumns): put `WHERE …` after it. */
export const codeRowsWithLinks = `codes c LEFT JOIN code_link_forms f ON f.id = c.link_form`;
/** The link form's columns of codeRowsWithLinks. */
export const linkFormColumns = `f.origin AS form_origin, f.link_order AS form_order, f.kid AS form_kid`;

/** A row's link: as stored, else written again from its form (code-service migration 0009). */
export function linkOfRow(row: LinkColumns): string {
  if (row.url !== null) return row.url;
  if (row.form_origin === null || row.form_order === null) {
    throw new Error(`codes: a row of ${row.gtin}/${row.serial} has neither its link nor a known link form`);
  }
  return linkOfCode(row, { origin: row.form_origin, order: row.form_order });
}

/** A row's signing key id: as stored, else its link form's (code-service migration 0010). */
function kidOfRow(row: CodeRow): string {
  const kid = row.kid ?? row.form_kid;
  if (kid === null)
    throw new Error(`codes: a row of ${row.gtin}/${row.serial} has neither its key id nor a link form naming one`);
  return kid;
}

const toRecord = (row: CodeRow): CodeRecord => ({
  assetId: row.asset_id,
  accountId: row.account_id,
  environment: row.environment,
  gtin: row.gtin,
  serial: row.serial,
  batch: row.batch,
  expiry: row.expiry,
  kid: kidOfRow(row),
  signature: row.signature,
  url: linkOfRow(row),
  metadata: row.metadata,
  createdAt: new Date(row.created_at),
  expiresAt: row.expires_at === null ? null : new Date(row.expires_at),
});

export interface NewCode {
  assetId: string;
  gtin: string;
  serial: string;
  batch: string | null;
  expiry: string | null;
  signature: string;
  url: string;
  metadata: Record<string, unknown>;
  expiresAt: Date | null;
}

/** A code row to store: the code, its owner, the key that signed it and when it was made. */
export interface StoredCode extends NewCode {
  owner: Principal;
  kid: string;
  createdAt: Date;
  /**
   * Stores the link as this form when it gives the link back exactly, else whole, and the key id as
   * the form's when the form names this key (link-forms.ts).
   */
  linkForm?: StoredLinkForm | undefined;
}

/**
 * The statement that stores codes (in their events' transaction or statement); the codes of several
 * requests, owners and keys may share it (group commit). A code whose GTIN and serial its owner
 * already has is left out, and so is the second of two such codes in one statement. So is a code
 * whose owner is no longer its GTIN's signer as the statement reads the claims (gtin-claim-store.ts,
 * findGtinSigner: the owner of an active claim covering it, else the operator), whatever a replica's
 * cache of signers still says (`onlyCurrentSigners`, false only where tests seed rows). Run under
 * gtinClaimsLock held shared, taken before the statement (a batch's chunks: writeCodes), a claim's
 * change (which holds it exclusively) waits for the statements running and the ones after it read
 * the change, so a GTIN revoked while a batch runs takes not one code more once it has answered. Rows go in in (account, environment,
 * gtin, serial) order, so two statements racing over the same serials wait for each other instead of
 * deadlocking. It returns the asset id of each code stored, as `key` (what
 * `EventStore.startStreamsWithRows` reads).
 */
export function codesInsert(
  codes: readonly StoredCode[],
  { onlyCurrentSigners = true }: { onlyCurrentSigners?: boolean } = {},
): { text: string; params: unknown[] } {
  const rows = JSON.stringify(
    codes.map(({ assetId, expiresAt, owner, createdAt, linkForm, ...rest }) => ({
      ...rest,
      ...(linkForm && linkOfCode(rest, linkForm) === rest.url
        ? { url: null, link_form: linkForm.id, ...(linkForm.kid === rest.kid ? { kid: null } : {}) }
        : {}),
      asset_id: assetId,
      account_id: owner.accountId,
      environment: owner.environment,
      created_at: createdAt,
      expires_at: expiresAt,
    })),
  );
  // Each GTIN's signer is read once per statement, whatever the number of its codes.
  const items = new Map<string, { environment: Environment; gtin: string; covering: string[] }>();
  for (const { owner, gtin } of codes) {
    items.set(`${owner.environment}:${gtin}`, { environment: owner.environment, gtin, covering: claimValuesCovering(gtin) });
  }
  const signers = onlyCurrentSigners
    ? `JOIN (
         SELECT s.environment, s.gtin, ${gtinSignerSql('s.covering', 's.environment')} AS account_id
         FROM jsonb_to_recordset($2::jsonb) AS s(environment text, gtin text, covering text[])
       ) AS signer ON signer.environment = r.environment AND signer.gtin = r.gtin AND signer.account_id = r.account_id`
    : '';
  return {
    text: `INSERT INTO codes (asset_id, account_id, environment, gtin, serial, batch, expiry, kid, signature, url, link_form, metadata, created_at, expires_at)
     SELECT r.asset_id, r.account_id, r.environment, r.gtin, r.serial, r.batch, r.expiry, r.kid, r.signature, r.url, r.link_form, r.metadata, r.created_at, r.expires_at
     FROM jsonb_to_recordset($1::jsonb)
       AS r(asset_id text, account_id text, environment text, gtin text, serial text, batch text, expiry text, kid text, signature text,
            url text, link_form integer, metadata jsonb, created_at timestamptz, expires_at timestamptz)
     ${signers}
     ORDER BY r.account_id, r.environment, r.gtin, r.serial
     ON CONFLICT (account_id, environment, gtin, serial) DO NOTHING RETURNING asset_id AS key`,
    params: onlyCurrentSigners ? [rows, JSON.stringify([...items.values()])] : [rows],
  };
}

/** Stores codes in one statement (codesInsert). Resolves with the asset ids that were stored. */
export async function insertCodes(
  sql: SqlExecutor,
  codes: readonly StoredCode[],
  options?: { onlyCurrentSigners?: boolean },
): Promise<Set<string>> {
  const { text, params } = codesInsert(codes, options);
  const rows = await sql.query<{ key: string }>(text, params);
  return new Set(rows.map((row) => row.key));
}

/** Which of these asset ids are stored as codes (of anyone: asset ids are unique). */
export async function storedAssetIds(sql: SqlExecutor, assetIds: readonly string[]): Promise<Set<string>> {
  if (assetIds.length === 0) return new Set();
  const rows = await sql.query<{ asset_id: string }>('SELECT asset_id FROM codes WHERE asset_id = ANY($1::text[])', [assetIds]);
  return new Set(rows.map((row) => row.asset_id));
}

/** The owner's codes with these asset ids, by asset id. */
export async function findOwnCodesByAssetId(
  sql: SqlExecutor,
  owner: Principal,
  assetIds: readonly string[],
): Promise<Map<string, CodeRecord>> {
  if (assetIds.length === 0) return new Map();
  const rows = await sql.query<CodeRow>(
    `SELECT c.*, ${linkFormColumns} FROM ${codeRowsWithLinks} WHERE c.asset_id = ANY($1::text[]) AND c.account_id = $2 AND c.environment = $3`,
    [assetIds, owner.accountId, owner.environment],
  );
  return new Map(rows.map((row) => [row.asset_id, toRecord(row)]));
}

/** An account's code for this item in this environment, if it made one (one at most: codes_item_owner_key). */
export async function findAccountsCodeOfItem(
  sql: SqlExecutor,
  accountId: string,
  environment: Environment,
  gtin: string,
  serial: string,
): Promise<CodeRecord | undefined> {
  const rows = await sql.query<CodeRow>(
    `SELECT c.*, ${linkFormColumns} FROM ${codeRowsWithLinks}
     WHERE c.environment = $1 AND c.serial = $2 AND c.account_id = $3 AND c.gtin = $4`,
    [environment, serial, accountId, gtin],
  );
  return rows[0] ? toRecord(rows[0]) : undefined;
}
