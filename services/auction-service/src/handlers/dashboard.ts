import { type DashboardQuery, decodeCursor, encodeCursor, type Principal } from '@hallmark/contracts';
import { cursorMicrosecondsPattern, type SqlDatabase } from '@hallmark/sql';
import { listObjects } from '../store/object-store.ts';

/** GET /auction/dashboard/objects: newest first, by status, cursor-paged. */
export async function dashboard(db: SqlDatabase, owner: Principal, query: DashboardQuery) {
  const limit = query.limit ?? 20;
  const [afterUs, afterId] = query.cursor ? decodeCursor(query.cursor, [cursorMicrosecondsPattern, /^obj_[0-9a-f]{1,40}$/]) : [];
  const rows = await listObjects(db, owner, {
    limit: limit + 1,
    ...(query.status ? { status: query.status } : {}),
    ...(afterUs && afterId ? { after: { registeredUs: afterUs, id: afterId } } : {}),
  });
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  const hasMore = rows.length > limit;
  return {
    objects: page.map((row) => ({
      serial: row.service_serial,
      title: row.title,
      status: row.status,
      photo_status: {
        count: row.photo_count,
        required: row.photo_required,
        binding_status: row.photo_count === row.photo_required ? 'valid' : 'pending',
      },
    })),
    pagination: { limit, hasMore, nextCursor: hasMore && last ? encodeCursor([last.registered_us, last.id]) : null },
  };
}
