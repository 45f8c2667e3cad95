import { decodeCursor, encodeCursor, type Pagination, type Tier } from '@hallmark/contracts';
import { cursorMicroseconds, cursorMicrosecondsPattern, cursorTime, type SqlExecutor } from '@hallmark/sql';
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
  /** The time of its account.created event (the product's clock, as its keys' times). */
  createdAt: Date,
): Promise<Account> {
  const rows = await sql.query<AccountRow>(
    'INSERT INTO accounts (id, name, tier, is_operator, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING *',
    [input.id ?? newId('acc'), input.name, input.tier, input.isOperator, createdAt],
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

/** Every account, newest first, with cursor paging (the operator's `GET /accounts`, `hallmark accounts list`). */
export async function listAccounts(
  sql: SqlExecutor,
  options: { limit: number; cursor?: string | undefined },
): Promise<{ accounts: Account[]; pagination: Pagination }> {
  const [afterUs, afterId] = options.cursor ? decodeCursor(options.cursor, [cursorMicrosecondsPattern, /^.{1,100}$/]) : [];
  const rows = await sql.query<AccountRow & { created_us: string }>(
    `SELECT a.*, ${cursorMicroseconds('a.created_at')} AS created_us FROM accounts a
     WHERE $1::bigint IS NULL OR (a.created_at, a.id) < (${cursorTime('$1')}, $2::text)
     ORDER BY a.created_at DESC, a.id DESC
     LIMIT $3`,
    [afterUs ?? null, afterId ?? null, options.limit + 1],
  );
  const page = rows.slice(0, options.limit);
  const last = page.at(-1);
  const hasMore = rows.length > options.limit;
  return {
    accounts: page.map(toAccount),
    pagination: { limit: options.limit, hasMore, nextCursor: hasMore && last ? encodeCursor([last.created_us, last.id]) : null },
  };
}
