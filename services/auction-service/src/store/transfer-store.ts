import type { Principal } from '@hallmark/contracts';
import type { SqlExecutor } from '@hallmark/sql';
import type { TransferRowFacts, TransferState } from '../domain/transfer.ts';

/**
 * A transfer's private row: what must stay out of the public history (the code's HMAC, the wrong
 * attempts) and a copy of its status for reading. The object's stream decides the status.
 */
export interface TransferRow {
  id: string;
  object_id: string;
  code_hash: string;
  attempts: number;
  /** pending, completed, locked, expired, cancelled; 'completing' only in rows written before transfers moved into the stream. */
  status: string;
}

/**
 * Stores a transfer's code hash, in the transaction that appends its start. False, storing
 * nothing, when a row has the id already: the caller refuses (throws), so its append is rolled back
 * and no started transfer is left without its own code.
 */
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
): Promise<boolean> {
  const inserted = await sql.query(
    `INSERT INTO auction_transfers (id, object_id, account_id, environment, from_owner_id, to_owner_id, sale_price, sale_currency,
       code_hash, status, expires_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', $10, $11)
     ON CONFLICT (id) DO NOTHING RETURNING id`,
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
  return inserted.length === 1;
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

/** What a confirm's try found: its number (1 to the limit) and the wrong codes counted so far, its own included. */
export interface CodeTry {
  tries: number;
  attempts: number;
}

/**
 * What takeCodeTry did: took a try (`taken`), or found every try taken, with the row as the statement
 * found it (its status a copy of the stream's, which may lag it, never run ahead: an ended row never
 * opens again); no row when there is none.
 */
export type CodeTryOutcome = ({ taken: true } & CodeTry) | { taken: false; row: TransferRowFacts | undefined };

/**
 * Takes one of the transfer's `limit` tries for a code the caller compared (`wrong` when it was not
 * the transfer's: counted as a wrong attempt in the same statement). Without a try left, the
 * comparison must count for nothing. One statement, so confirms racing each other take the tries
 * one by one and no more than `limit` codes are ever acted on.
 */
export async function takeCodeTry(sql: SqlExecutor, id: string, wrong: boolean, limit: number): Promise<CodeTryOutcome> {
  const rows = await sql.query<{
    tries: number | null;
    taken_attempts: number | null;
    attempts: number;
    status: string;
    expires_at: Date;
  }>(
    `WITH taken AS (
       UPDATE auction_transfers SET tries = tries + 1, attempts = attempts + CASE WHEN $2::boolean THEN 1 ELSE 0 END
       WHERE id = $1 AND tries < $3 RETURNING tries, attempts
     )
     SELECT taken.tries, taken.attempts AS taken_attempts, t.attempts, t.status, t.expires_at
     FROM auction_transfers t LEFT JOIN taken ON true WHERE t.id = $1`,
    [id, wrong, limit],
  );
  const row = rows[0];
  if (row?.tries != null && row.taken_attempts != null) return { taken: true, tries: row.tries, attempts: row.taken_attempts };
  return {
    taken: false,
    row: row && { attempts: row.attempts, status: row.status, expiresAt: new Date(row.expires_at) },
  };
}

/** Gives back the try of a right code that did not complete the transfer (refused, or cut off by a race). */
export async function returnCodeTry(sql: SqlExecutor, id: string): Promise<void> {
  await sql.query('UPDATE auction_transfers SET tries = tries - 1 WHERE id = $1 AND tries > 0', [id]);
}

/**
 * Brings a row's status in line with the stream's (after a change, or to repair one a cut-off left
 * behind). Only an open row moves: a transfer that ended (completed, locked, expired) never opens
 * again, so a refusal decided on a state read before the end (a confirm that found no try left
 * while the sale was being appended) cannot set its row back to pending.
 */
export async function saveTransferStatus(sql: SqlExecutor, transfer: TransferState, at: Date): Promise<void> {
  await sql.query(
    `UPDATE auction_transfers SET status = $2,
       completed_at = CASE WHEN $2 = 'completed' THEN COALESCE(completed_at, $3::timestamptz) END
     WHERE id = $1 AND status IS DISTINCT FROM $2 AND status IN ('pending', 'completing')`,
    [transfer.transferId, transfer.status, at],
  );
}
