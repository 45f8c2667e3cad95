import { fileURLToPath } from 'node:url';
import type { Environment, GeneratedCode, Principal } from '@hallmark/contracts';
import { loadMigrations, runMigrations, type SqlDatabase, type SqlExecutor } from '@hallmark/sql';

const folder = fileURLToPath(new URL('../../migrations', import.meta.url));

export async function migrateCodes(db: SqlDatabase): Promise<void> {
  await runMigrations(db, await loadMigrations('code-service', folder));
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

interface CodeRow {
  asset_id: string;
  account_id: string;
  environment: Environment;
  gtin: string;
  serial: string;
  batch: string | null;
  expiry: string | null;
  kid: string;
  signature: string;
  url: string;
  metadata: Record<string, unknown>;
  created_at: Date | string;
  expires_at: Date | string | null;
}

const toRecord = (row: CodeRow): CodeRecord => ({
  assetId: row.asset_id,
  accountId: row.account_id,
  environment: row.environment,
  gtin: row.gtin,
  serial: row.serial,
  batch: row.batch,
  expiry: row.expiry,
  kid: row.kid,
  signature: row.signature,
  url: row.url,
  metadata: row.metadata,
  createdAt: new Date(row.created_at),
  expiresAt: row.expires_at === null ? null : new Date(row.expires_at),
});

/** Stores a code unless the account already has this GTIN and serial; false then. */
export async function insertCode(sql: SqlExecutor, code: Omit<CodeRecord, 'createdAt'> & { createdAt: Date }): Promise<boolean> {
  const rows = await sql.query(
    `INSERT INTO codes (asset_id, account_id, environment, gtin, serial, batch, expiry, kid, signature, url, metadata, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
     ON CONFLICT (account_id, environment, gtin, serial) DO NOTHING RETURNING asset_id`,
    [
      code.assetId,
      code.accountId,
      code.environment,
      code.gtin,
      code.serial,
      code.batch,
      code.expiry,
      code.kid,
      code.signature,
      code.url,
      JSON.stringify(code.metadata),
      code.createdAt,
      code.expiresAt,
    ],
  );
  return rows.length === 1;
}

export async function deleteCode(sql: SqlExecutor, assetId: string): Promise<void> {
  await sql.query('DELETE FROM codes WHERE asset_id = $1', [assetId]);
}

/** Every account's code for this item in this environment (usually one). */
export async function findCodesByItem(
  sql: SqlExecutor,
  environment: Environment,
  gtin: string,
  serial: string,
): Promise<CodeRecord[]> {
  const rows = await sql.query<CodeRow>('SELECT * FROM codes WHERE environment = $1 AND gtin = $2 AND serial = $3', [
    environment,
    gtin,
    serial,
  ]);
  return rows.map(toRecord);
}

export type IdempotencyClaim =
  | { kind: 'claimed' }
  | { kind: 'replay'; response: GeneratedCode }
  | { kind: 'mismatch' }
  | { kind: 'pending' };

/** Claims an idempotency key for a request, or finds the answer stored for it. */
export async function claimIdempotencyKey(
  sql: SqlExecutor,
  owner: Principal,
  key: string,
  requestHash: string,
): Promise<IdempotencyClaim> {
  const inserted = await sql.query(
    `INSERT INTO idempotency_keys (account_id, environment, key, request_hash) VALUES ($1, $2, $3, $4)
     ON CONFLICT DO NOTHING RETURNING key`,
    [owner.accountId, owner.environment, key, requestHash],
  );
  if (inserted.length === 1) return { kind: 'claimed' };
  const rows = await sql.query<{ request_hash: string; response: GeneratedCode | null }>(
    'SELECT request_hash, response FROM idempotency_keys WHERE account_id = $1 AND environment = $2 AND key = $3',
    [owner.accountId, owner.environment, key],
  );
  const row = rows[0];
  if (!row) return { kind: 'pending' };
  if (row.request_hash !== requestHash) return { kind: 'mismatch' };
  return row.response ? { kind: 'replay', response: row.response } : { kind: 'pending' };
}

export async function completeIdempotencyKey(
  sql: SqlExecutor,
  owner: Principal,
  key: string,
  response: GeneratedCode,
): Promise<void> {
  await sql.query('UPDATE idempotency_keys SET response = $4 WHERE account_id = $1 AND environment = $2 AND key = $3', [
    owner.accountId,
    owner.environment,
    key,
    JSON.stringify(response),
  ]);
}

/** Lets a retry try again after the first attempt failed. */
export async function releaseIdempotencyKey(sql: SqlExecutor, owner: Principal, key: string): Promise<void> {
  await sql.query('DELETE FROM idempotency_keys WHERE account_id = $1 AND environment = $2 AND key = $3 AND response IS NULL', [
    owner.accountId,
    owner.environment,
    key,
  ]);
}
