import { decodeCursor, encodeCursor, type KeyView, type Pagination, type Principal } from '@hallmark/contracts';
import { cursorMicroseconds, cursorMicrosecondsPattern, cursorTime, type SqlExecutor } from '@hallmark/sql';
import { toApiKeyRecord } from './api-key-store.ts';
import { apiKeyView } from './api-keys.ts';
import { toVerificationKeyView, type VerificationKeyRow } from './verification-key-store.ts';

type Row = Record<string, unknown> & { kind: 'api' | 'verification'; created_us: string; id: string };

/**
 * Every key of one account and environment, newest first: API keys, registered public keys and
 * signing keys, in one list with cursor paging. Never a secret or a hash.
 */
export async function listKeys(
  sql: SqlExecutor,
  owner: Principal,
  options: { limit: number; cursor?: string; type?: 'api' | 'public' | 'signing'; createdBy?: string },
  now: Date,
): Promise<{ keys: KeyView[]; pagination: Pagination }> {
  const [afterUs, afterId] = options.cursor ? decodeCursor(options.cursor, [cursorMicrosecondsPattern, /^.{1,100}$/]) : [];
  const rows = await sql.query<Row>(
    // Ordered on the owners' indexes' columns themselves (api_keys_by_owner, verification_keys_by_owner,
    // merged): a value computed from created_at sorted all the owner's keys for a page of one.
    `SELECT all_keys.*, ${cursorMicroseconds('created_at')} AS created_us FROM (
       SELECT 'api' AS kind, id, account_id, environment, name, prefix, scopes, created_by, created_at, expires_at, revoked_at,
              NULL::text AS type, NULL::text AS public_key, NULL::text AS status, NULL::timestamptz AS retired_at,
              (SELECT u.last_used_at FROM api_key_last_used u WHERE u.key_id = api_keys.id) AS last_used_at,
              restricted_gtins
         FROM api_keys WHERE account_id = $1 AND environment = $2 AND ($3::text IS NULL OR $3 = 'api')
          AND ($7::text IS NULL OR created_by = $7)
       UNION ALL
       SELECT 'verification', id, account_id, environment, name, NULL::text, NULL::text[], created_by, created_at, NULL::timestamptz, revoked_at,
              type, public_key, status, retired_at, NULL::timestamptz, NULL::text[]
         FROM verification_keys WHERE account_id = $1 AND environment = $2 AND ($3::text IS NULL OR $3 = type)
          AND ($7::text IS NULL OR created_by = $7)
     ) AS all_keys
     WHERE $4::bigint IS NULL OR (created_at, id) < (${cursorTime('$4')}, $5::text)
     ORDER BY created_at DESC, id DESC
     LIMIT $6`,
    [
      owner.accountId,
      owner.environment,
      options.type ?? null,
      afterUs ?? null,
      afterId ?? null,
      options.limit + 1,
      options.createdBy ?? null,
    ],
  );
  const page = rows.slice(0, options.limit);
  const keys = page.map((row) =>
    row.kind === 'api'
      ? apiKeyView(toApiKeyRecord(row as never), now, row.last_used_at ? new Date(row.last_used_at as string | Date) : null)
      : toVerificationKeyView(row as unknown as VerificationKeyRow),
  );
  const last = page.at(-1);
  const hasMore = rows.length > options.limit;
  return {
    keys,
    pagination: {
      limit: options.limit,
      hasMore,
      nextCursor: hasMore && last ? encodeCursor([last.created_us, last.id]) : null,
    },
  };
}
