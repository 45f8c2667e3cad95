import { HallmarkError, type KeyView, type Pagination, type Principal } from '@hallmark/contracts';
import type { SqlExecutor } from '@hallmark/sql';
import { toApiKeyRecord } from './api-key-store.ts';
import { apiKeyView } from './api-keys.ts';
import { toVerificationKeyView, type VerificationKeyRow } from './verification-key-store.ts';

/** Creation time in microseconds since the epoch (PostgreSQL's precision; an ISO string would drop digits) and id. */
interface Cursor {
  createdUs: string;
  id: string;
}

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify([cursor.createdUs, cursor.id])).toString('base64url');
}

function decodeCursor(text: string): Cursor {
  try {
    const [createdUs, id] = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as [string, string];
    if (typeof id !== 'string' || typeof createdUs !== 'string' || !/^\d{1,20}$/.test(createdUs)) throw new Error('bad cursor');
    return { createdUs, id };
  } catch {
    throw new HallmarkError('VALIDATION_ERROR', 'Invalid request: cursor is not one this API gave out.', {
      fields: [{ field: 'cursor', in: 'querystring', message: 'is not a cursor from a previous page' }],
    });
  }
}

type Row = Record<string, unknown> & { kind: 'api' | 'verification'; created_us: string; id: string };

/**
 * Every key of one account and environment, newest first: API keys, registered public keys and
 * signing keys, in one list with cursor paging. Never a secret or a hash.
 */
export async function listKeys(
  sql: SqlExecutor,
  owner: Principal,
  options: { limit: number; cursor?: string; type?: 'api' | 'public' | 'signing' },
  now: Date,
): Promise<{ keys: KeyView[]; pagination: Pagination }> {
  const after = options.cursor ? decodeCursor(options.cursor) : undefined;
  const rows = await sql.query<Row>(
    `SELECT all_keys.*, t.created_us::text AS created_us FROM (
       SELECT 'api' AS kind, id, account_id, environment, name, prefix, scopes, created_at, expires_at, revoked_at,
              NULL::text AS type, NULL::text AS public_key, NULL::text AS status, NULL::timestamptz AS retired_at
         FROM api_keys WHERE account_id = $1 AND environment = $2 AND ($3::text IS NULL OR $3 = 'api')
       UNION ALL
       SELECT 'verification', id, account_id, environment, name, NULL::text, NULL::text[], created_at, NULL::timestamptz, revoked_at,
              type, public_key, status, retired_at
         FROM verification_keys WHERE account_id = $1 AND environment = $2 AND ($3::text IS NULL OR $3 = type)
     ) AS all_keys
     CROSS JOIN LATERAL (SELECT (extract(epoch FROM created_at) * 1000000)::bigint AS created_us) AS t
     WHERE $4::bigint IS NULL OR (t.created_us, id) < ($4::bigint, $5::text)
     ORDER BY t.created_us DESC, id DESC
     LIMIT $6`,
    [owner.accountId, owner.environment, options.type ?? null, after?.createdUs ?? null, after?.id ?? null, options.limit + 1],
  );
  const page = rows.slice(0, options.limit);
  const keys = page.map((row) =>
    row.kind === 'api'
      ? apiKeyView(toApiKeyRecord(row as never), now)
      : toVerificationKeyView(row as unknown as VerificationKeyRow),
  );
  const last = page.at(-1);
  const hasMore = rows.length > options.limit;
  return {
    keys,
    pagination: {
      limit: options.limit,
      hasMore,
      nextCursor: hasMore && last ? encodeCursor({ createdUs: last.created_us, id: last.id }) : null,
    },
  };
}
