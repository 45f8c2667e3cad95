import { type Environment, HallmarkError, type Scope, type Tier } from '@hallmark/contracts';
import type { SqlExecutor } from '@hallmark/sql';
import { type ApiKeyEvent, accountKeysOf, decide, isDomainError } from './domain/api-keys.ts';
import type { Restrictions } from './domain/key-restrictions.ts';

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  environment: Environment;
  name: string;
  prefix: string;
  scopes: Scope[];
  /** The API key that created it; null for an account's first key and keys made by the operator's CLI. */
  createdBy: string | null;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  /** The key that replaced it by a rotation; null if it was never rotated (accounts migration 0013). */
  replacedBy: string | null;
  /** The GTINs it is restricted to; null: not restricted (accounts migration 0019). */
  restrictions: Restrictions | null;
}

/** A key as authentication needs it: with its account's tier and operator flag. */
export interface ApiKeyWithAccount extends ApiKeyRecord {
  tier: Tier;
  isOperator: boolean;
}

interface ApiKeyRow {
  id: string;
  account_id: string;
  environment: Environment;
  name: string;
  prefix: string;
  scopes: Scope[];
  created_by: string | null;
  created_at: Date | string;
  expires_at: Date | string | null;
  revoked_at: Date | string | null;
  replaced_by?: string | null;
  restricted_gtins?: string[] | null;
  tier?: Tier;
  is_operator?: boolean;
}

const dateOrNull = (value: Date | string | null) => (value === null ? null : new Date(value));

export function toApiKeyRecord(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    environment: row.environment,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes,
    createdBy: row.created_by ?? null,
    createdAt: new Date(row.created_at),
    expiresAt: dateOrNull(row.expires_at),
    revokedAt: dateOrNull(row.revoked_at),
    replacedBy: row.replaced_by ?? null,
    restrictions: row.restricted_gtins ? { gtins: row.restricted_gtins } : null,
  };
}

export interface NewApiKey {
  id: string;
  accountId: string;
  environment: Environment;
  name: string;
  keyHash: string;
  prefix: string;
  scopes: readonly Scope[];
  createdBy: string | null;
  /** The time of its key.issued event: the clock its expiresAt was counted on, not the database's. */
  createdAt: Date;
  expiresAt: Date | null;
  restrictions: Restrictions | null;
}

export async function insertApiKey(sql: SqlExecutor, key: NewApiKey): Promise<ApiKeyRecord> {
  const rows = await sql.query<ApiKeyRow>(
    `INSERT INTO api_keys (id, account_id, environment, name, key_hash, prefix, scopes, created_by, created_at, expires_at, restricted_gtins)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`,
    [
      key.id,
      key.accountId,
      key.environment,
      key.name,
      key.keyHash,
      key.prefix,
      key.scopes,
      key.createdBy,
      key.createdAt,
      key.expiresAt,
      key.restrictions ? [...key.restrictions.gtins] : null,
    ],
  );
  return toApiKeyRecord(rows[0] as ApiKeyRow);
}

/** How many API keys of the account and environment are active at `now` (neither revoked nor expired). */
export async function countActiveApiKeys(
  sql: SqlExecutor,
  owner: { accountId: string; environment: Environment },
  now: Date,
): Promise<number> {
  const rows = await sql.query<{ count: string | number }>(
    `SELECT count(*) AS count FROM api_keys
     WHERE account_id = $1 AND environment = $2 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $3)`,
    [owner.accountId, owner.environment, now],
  );
  return Number(rows[0]?.count ?? 0);
}

/** The key whose secret hashes to `keyHash`, with its account; undefined when there is none. */
export async function findApiKeyByHash(sql: SqlExecutor, keyHash: string): Promise<ApiKeyWithAccount | undefined> {
  const rows = await sql.query<ApiKeyRow>(
    `SELECT k.*, a.tier, a.is_operator FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_hash = $1`,
    [keyHash],
  );
  const row = rows[0];
  return row ? { ...toApiKeyRecord(row), tier: row.tier as Tier, isOperator: Boolean(row.is_operator) } : undefined;
}

/** The key with this id, with its account; undefined when there is none (console sessions hold the id, not the secret). */
export async function findApiKeyById(sql: SqlExecutor, id: string): Promise<ApiKeyWithAccount | undefined> {
  const rows = await sql.query<ApiKeyRow>(
    `SELECT k.*, a.tier, a.is_operator FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.id = $1`,
    [id],
  );
  const row = rows[0];
  return row ? { ...toApiKeyRecord(row), tier: row.tier as Tier, isOperator: Boolean(row.is_operator) } : undefined;
}

/**
 * In a write made by an API key (a key it creates or rotates, a public key it registers): holds the
 * acting key's row until the transaction ends (`FOR SHARE`, so its revocation or rotation waits for
 * this write, or this write reads it done) and refuses when the key no longer works, as the gateway
 * would (`401 REVOKED_API_KEY`, `EXPIRED_API_KEY`). The gateway checks the key once the request's
 * body is read; this closes the milliseconds between that check and the write, in which a key
 * revoked by its owner could still have made a working credential.
 */
export async function lockActingKey(sql: SqlExecutor, keyId: string, now: Date): Promise<{ expiresAt: Date | null }> {
  const [row] = await sql.query<{ revoked_at: Date | string | null; expires_at: Date | string | null }>(
    'SELECT revoked_at, expires_at FROM api_keys WHERE id = $1 FOR SHARE',
    [keyId],
  );
  if (!row) throw new HallmarkError('INVALID_API_KEY', 'The API key does not exist.');
  const expiresAt = dateOrNull(row.expires_at);
  refuseUnusableKey({ revokedAt: dateOrNull(row.revoked_at), expiresAt }, now);
  return { expiresAt };
}

/**
 * Thrown in a write whose key was decided to expire later than the acting key now does: the
 * decision read the acting key as the gateway authenticated it, before a rotation with a grace gave
 * it an expiry (a request held open across the rotation, a gateway that had not heard). The write
 * rolls back and is decided again with `expiresAt`, so a new key never outlives the key that made it.
 */
export class ActingKeyExpiryMoved extends Error {
  override readonly name = 'ActingKeyExpiryMoved';
  constructor(readonly expiresAt: Date) {
    super('The acting key expires sooner than the decision read.');
  }
}

/**
 * lockActingKey, then ActingKeyExpiryMoved when the key the write makes (expiring at `made`, ISO or
 * null for never) would outlive the acting key as it is now.
 */
export async function lockActingKeyOutliving(sql: SqlExecutor, keyId: string, made: string | null, now: Date): Promise<void> {
  const { expiresAt } = await lockActingKey(sql, keyId, now);
  if (expiresAt && (made === null || Date.parse(made) > expiresAt.getTime())) throw new ActingKeyExpiryMoved(expiresAt);
}

/** Throws `REVOKED_API_KEY` for a revoked key and `EXPIRED_API_KEY` (details `expiredAt`) for an expired one. */
export function refuseUnusableKey(key: Pick<ApiKeyRecord, 'revokedAt' | 'expiresAt'>, now: Date): void {
  if (key.revokedAt) throw new HallmarkError('REVOKED_API_KEY', 'The API key was revoked; create a new one.');
  if (key.expiresAt && key.expiresAt.getTime() <= now.getTime()) {
    throw new HallmarkError('EXPIRED_API_KEY', 'The API key has expired; create a new one.', {
      expiredAt: key.expiresAt.toISOString(),
    });
  }
}

export type KeyRevoked = Extract<ApiKeyEvent, { type: 'KeyRevoked' }>;

/**
 * Decides revoking a key of this account and environment through the account's keys decider,
 * without writing: undefined when the account has no such key in this environment; else the key
 * and the KeyRevoked event to write (none when it was revoked already: the first revocation
 * stands). With `by` (the API key asking), only a key whose scopes are all within the asker's may
 * be revoked: else it fails with INSUFFICIENT_SCOPE (details: required, the scopes the asker lacks;
 * granted, its own), so a narrow `keys:write` key cannot switch off the account's stronger keys.
 * Without `by` (the operator's CLI) any key of the account may be revoked.
 */
export async function decideApiKeyRevocation(
  sql: SqlExecutor,
  owner: { accountId: string; environment: Environment },
  id: string,
  at: Date,
  by: { keyId: string; scopes: readonly Scope[]; isOperator: boolean; restrictions: Restrictions | null } | undefined,
): Promise<{ key: ApiKeyRecord; event: KeyRevoked | undefined } | undefined> {
  // The state the decision needs: the target key of this account, with the account's operator flag.
  // A key's scopes never change, and the write keeps the first revokedAt, so deciding before the
  // update leaves no race.
  const rows = await sql.query<ApiKeyRow>(
    `SELECT k.*, a.is_operator FROM api_keys k JOIN accounts a ON a.id = k.account_id
     WHERE k.id = $1 AND k.account_id = $2 AND k.environment = $3`,
    [id, owner.accountId, owner.environment],
  );
  const row = rows[0];
  if (!row) return undefined;
  const key = toApiKeyRecord(row);
  const decision = decide(
    {
      type: 'RevokeKey',
      keyId: id,
      environment: owner.environment,
      by: by ? { keyId: by.keyId, scopes: by.scopes, restrictions: by.restrictions } : null,
      now: at,
    },
    accountKeysOf({ id: owner.accountId, isOperator: by?.isOperator ?? Boolean(row.is_operator) }, [key]),
  );
  if (isDomainError(decision)) {
    if (decision.code === 'NOT_FOUND') return undefined;
    throw new HallmarkError(decision.code, decision.message, decision.details);
  }
  return { key, event: decision.find((event): event is KeyRevoked => event.type === 'KeyRevoked') };
}

/** Writes a KeyRevoked event's row; the first revokedAt stands. Undefined when the key is gone. */
export async function writeKeyRevoked(
  sql: SqlExecutor,
  owner: { accountId: string; environment: Environment },
  event: KeyRevoked,
): Promise<ApiKeyRecord | undefined> {
  const updated = await sql.query<ApiKeyRow>(
    `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $4)
     WHERE id = $1 AND account_id = $2 AND environment = $3 RETURNING *`,
    [event.data.keyId, owner.accountId, owner.environment, new Date(event.data.revokedAt)],
  );
  return updated[0] ? toApiKeyRecord(updated[0]) : undefined;
}

export async function listApiKeysOfAccount(sql: SqlExecutor, accountId: string): Promise<ApiKeyRecord[]> {
  const rows = await sql.query<ApiKeyRow>('SELECT * FROM api_keys WHERE account_id = $1 ORDER BY created_at DESC, id DESC', [
    accountId,
  ]);
  return rows.map(toApiKeyRecord);
}
