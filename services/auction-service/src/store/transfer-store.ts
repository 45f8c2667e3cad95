import type { Principal } from '@hallmark/contracts';
import type { SqlExecutor } from '@hallmark/sql';
import type { TransferState } from '../domain/transfer.ts';

/**
 * A transfer's private row: what must stay out of the public history (the code's HMAC, the wrong
 * attempts) and a copy of its status for reading. The object's stream decides the status.
 */
export interface TransferRow {
  id: string;
  object_id: string;
  code_hash: string;
  attempts: number;
  /** pending, completed, locked, expired; 'completing' only in rows written before transfers moved into the stream. */
  status: string;
}

/** Stores a transfer's code hash, in the transaction that appends its start; nothing when the id is taken. */
export async function insertTransferSecret(
  sql: SqlExecutor,
  owner: Principal,
  transfer: {
    id: string;
    objectId: string;
    fromOwnerId: string;
    toOwnerId: string;
    salePrice: number;
    saleCurrency: string;
    codeHash: string;
    expiresAt: string;
    createdAt: Date;
  },
): Promise<void> {
  await sql.query(
    `INSERT INTO auction_transfers (id, object_id, account_id, environment, from_owner_id, to_owner_id, sale_price, sale_currency,
       code_hash, status, expires_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', $10, $11)
     ON CONFLICT (id) DO NOTHING`,
    [
      transfer.id,
      transfer.objectId,
      owner.accountId,
      owner.environment,
      transfer.fromOwnerId,
      transfer.toOwnerId,
      transfer.salePrice,
      transfer.saleCurrency,
      transfer.codeHash,
      transfer.expiresAt,
      transfer.createdAt,
    ],
  );
}

/** The owner's transfer row; undefined for anyone else's. */
export async function findTransfer(sql: SqlExecutor, owner: Principal, id: string): Promise<TransferRow | undefined> {
  const rows = await sql.query<TransferRow>(
    `SELECT id, object_id, code_hash, attempts, status FROM auction_transfers WHERE id = $1 AND account_id = $2 AND environment = $3`,
    [id, owner.accountId, owner.environment],
  );
  return rows[0];
}

/** The rows of an object's transfers: their attempts are the private half of the object's fold. */
export async function transferRowsOf(sql: SqlExecutor, objectId: string): Promise<Array<Omit<TransferRow, 'code_hash'>>> {
  return sql.query(`SELECT id, object_id, attempts, status FROM auction_transfers WHERE object_id = $1`, [objectId]);
}

/**
 * Counts wrong codes from `seen` to `attempts`; false when another confirm counted one meanwhile
 * (the caller decides again on the new count), so no wrong attempt is lost to a race.
 */
export async function recordAttempts(sql: SqlExecutor, id: string, seen: number, attempts: number): Promise<boolean> {
  const rows = await sql.query('UPDATE auction_transfers SET attempts = $3 WHERE id = $1 AND attempts = $2 RETURNING id', [
    id,
    seen,
    attempts,
  ]);
  return rows.length === 1;
}

/** Brings a row's status in line with the stream's (after a change, or to repair one a cut-off left behind). */
export async function saveTransferStatus(sql: SqlExecutor, transfer: TransferState, at: Date): Promise<void> {
  await sql.query(
    `UPDATE auction_transfers SET status = $2,
       completed_at = CASE WHEN $2 = 'completed' THEN COALESCE(completed_at, $3::timestamptz) END
     WHERE id = $1 AND status IS DISTINCT FROM $2`,
    [transfer.transferId, transfer.status, at],
  );
}
