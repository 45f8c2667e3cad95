import { yymmddToIsoDate } from '@hallmark/codes';
import {
  type CodeList,
  type CodeListItem,
  codeNotFound,
  decodeInstantCursor,
  encodeCursor,
  type ListCodesQuery,
  maxCodesPageSize,
  type Principal,
} from '@hallmark/contracts';
import type { SqlExecutor } from '@hallmark/sql';
import { codeRowsWithLinks, type LinkColumns, linkFormColumns, linkOfRow } from './code-store.ts';

// GET /codes and GET /codes/{assetId} (docs/API.md, "Listing codes"): the owner's rows of `codes`,
// newest first, keyset-paged on (created_at, asset_id) through the indexes of migration 0007.

interface ListedRow extends LinkColumns {
  asset_id: string;
  metadata: Record<string, unknown> | string;
  created_at: Date | string;
  at_text: string;
}

/** About half of NATS's 1 MB message: a page of large codes stops early (it says hasMore). */
const maxPageBytes = 512 * 1024;

const columns = `asset_id, gtin, serial, batch, expiry, signature, url, metadata, created_at, created_at::text AS at_text, ${linkFormColumns}`;

const itemOf = (row: ListedRow): CodeListItem => ({
  assetId: row.asset_id,
  gtin: row.gtin,
  serialNumber: row.serial,
  batchNumber: row.batch,
  expiryDate: row.expiry ? yymmddToIsoDate(row.expiry) : null,
  url: linkOfRow(row),
  createdAt: new Date(row.created_at).toISOString(),
  metadata: typeof row.metadata === 'string' ? (JSON.parse(row.metadata) as Record<string, unknown>) : row.metadata,
});

/** A page of the owner's codes, newest first; VALIDATION_ERROR for a cursor this API did not give out. */
export async function listOwnCodes(db: SqlExecutor, owner: Principal, query: ListCodesQuery): Promise<CodeList> {
  const limit = Math.min(query.limit ?? 50, maxCodesPageSize);
  const params: unknown[] = [owner.accountId, owner.environment];
  const where = ['account_id = $1', 'environment = $2'];
  const add = (column: string, value: string) => {
    params.push(value);
    where.push(`${column} = $${params.length}`);
  };
  if (query.gtin) add('gtin', query.gtin);
  if (query.serial) add('serial', query.serial);
  if (query.batch) add('batch', query.batch);
  if (query.cursor) {
    const [at, assetId] = decodeInstantCursor(query.cursor, /^code_[0-9a-zA-Z_-]{1,80}$/);
    params.push(at, assetId);
    where.push(`(created_at, asset_id) < ($${params.length - 1}::timestamptz, $${params.length})`);
  }
  params.push(limit + 1);
  const rows = await db.query<ListedRow>(
    `SELECT ${columns} FROM ${codeRowsWithLinks} WHERE ${where.join(' AND ')}
      ORDER BY created_at DESC, asset_id DESC LIMIT $${params.length}`,
    params,
  );
  // A page must fit in one bus message (NATS: 1 MB): codes carry up to 16 KiB of metadata each, so
  // a page stops early, its cursor at its last code, once it holds about half a megabyte.
  const data: CodeListItem[] = [];
  let bytes = 0;
  for (const row of rows.slice(0, limit)) {
    const item = itemOf(row);
    bytes += Buffer.byteLength(JSON.stringify(item));
    if (data.length > 0 && bytes > maxPageBytes) break;
    data.push(item);
  }
  const hasMore = rows.length > data.length;
  const last = rows[data.length - 1];
  const nextCursor = hasMore && last ? encodeCursor([last.at_text, last.asset_id]) : null;
  return { data, nextCursor, pagination: { limit, hasMore, nextCursor } };
}

/** One of the owner's codes; NOT_FOUND for another account's (or environment's) code, as for none. */
export async function findOwnCode(db: SqlExecutor, owner: Principal, assetId: string): Promise<CodeListItem> {
  const rows = await db.query<ListedRow>(
    `SELECT ${columns} FROM ${codeRowsWithLinks} WHERE asset_id = $1 AND account_id = $2 AND environment = $3`,
    [assetId, owner.accountId, owner.environment],
  );
  const row = rows[0];
  if (!row) throw codeNotFound(assetId);
  return itemOf(row);
}
