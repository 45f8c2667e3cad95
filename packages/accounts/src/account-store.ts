import type { Tier } from '@hallmark/contracts';
import type { SqlExecutor } from '@hallmark/sql';
import { newId } from './ids.ts';

export interface Account {
  id: string;
  name: string;
  tier: Tier;
  isOperator: boolean;
  createdAt: Date;
}

interface AccountRow {
  id: string;
  name: string;
  tier: Tier;
  is_operator: boolean;
  created_at: Date | string;
}

const toAccount = (row: AccountRow): Account => ({
  id: row.id,
  name: row.name,
  tier: row.tier,
  isOperator: row.is_operator,
  createdAt: new Date(row.created_at),
});

export async function insertAccount(
  sql: SqlExecutor,
  input: { id?: string; name: string; tier: Tier; isOperator: boolean },
): Promise<Account> {
  const rows = await sql.query<AccountRow>(
    'INSERT INTO accounts (id, name, tier, is_operator) VALUES ($1, $2, $3, $4) RETURNING *',
    [input.id ?? newId('acc'), input.name, input.tier, input.isOperator],
  );
  return toAccount(rows[0] as AccountRow);
}

export async function findAccount(sql: SqlExecutor, id: string): Promise<Account | undefined> {
  const rows = await sql.query<AccountRow>('SELECT * FROM accounts WHERE id = $1', [id]);
  return rows[0] ? toAccount(rows[0]) : undefined;
}

export async function findOperatorAccount(sql: SqlExecutor): Promise<Account | undefined> {
  const rows = await sql.query<AccountRow>('SELECT * FROM accounts WHERE is_operator ORDER BY created_at LIMIT 1');
  return rows[0] ? toAccount(rows[0]) : undefined;
}
