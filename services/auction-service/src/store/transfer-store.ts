import type { Principal } from '@hallmark/contracts';
import type { SqlExecutor } from '@hallmark/sql';

export interface TransferRow {
  id: string;
  object_id: string;
  from_owner_id: string;
  to_owner_id: string;
  sale_price: string;
  sale_currency: string;
  code_hash: string;
  attempts: number;
  status: 'pending' | 'completing' | 'completed' | 'locked';
  expires_at: Date | string;
}

/** Stores a pending transfer; false when the object already has an open one. */
export async function insertTransfer(
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
    expiresAt: Date;
    createdAt: Date;
  },
): Promise<boolean> {
  const rows = await sql.query(
    `INSERT INTO auction_transfers (id, object_id, account_id, environment, from_owner_id, to_owner_id, sale_price, sale_currency,
       code_hash, status, expires_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', $10, $11)
     ON CONFLICT DO NOTHING RETURNING id`,
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
  return rows.length === 1;
}

export async function findTransfer(sql: SqlExecutor, owner: Principal, id: string): Promise<TransferRow | undefined> {
  const rows = await sql.query<TransferRow>(
    `SELECT id, object_id, from_owner_id, to_owner_id, sale_price::text, sale_currency, code_hash, attempts, status, expires_at
     FROM auction_transfers WHERE id = $1 AND account_id = $2 AND environment = $3`,
    [id, owner.accountId, owner.environment],
  );
  return rows[0];
}

/** Counts a wrong code; the fifth locks the transfer. Resolves with the attempts made and the status. */
export async function recordWrongCode(sql: SqlExecutor, id: string): Promise<{ attempts: number; status: string } | undefined> {
  const rows = await sql.query<{ attempts: number; status: string }>(
    `UPDATE auction_transfers SET attempts = attempts + 1,
       status = CASE WHEN attempts + 1 >= 5 THEN 'locked' ELSE status END
     WHERE id = $1 AND status = 'pending' RETURNING attempts, status`,
    [id],
  );
  return rows[0];
}

/** Claims a pending transfer for completion: of two confirms racing, exactly one gets it. */
export async function claimTransfer(sql: SqlExecutor, id: string): Promise<boolean> {
  const rows = await sql.query(
    `UPDATE auction_transfers SET status = 'completing' WHERE id = $1 AND status = 'pending' RETURNING id`,
    [id],
  );
  return rows.length === 1;
}

export async function finishTransfer(sql: SqlExecutor, id: string, outcome: 'completed' | 'pending', at: Date): Promise<void> {
  await sql.query(
    `UPDATE auction_transfers SET status = $2, completed_at = CASE WHEN $2 = 'completed' THEN $3::timestamptz END
     WHERE id = $1 AND status = 'completing'`,
    [id, outcome, at],
  );
}
