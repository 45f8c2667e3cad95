import type { EventStore } from '@hallmark/event-store';
import type { SqlExecutor } from '@hallmark/sql';

/**
 * Which blobs are photos of objects. The blob store is shared and content-addressed, so the bytes of
 * a refused upload may also be another object's photo: only a SHA-256 recorded here is kept.
 */

/**
 * Records a photo's SHA-256 before its `photographed` event is appended (a record without the event
 * only keeps a blob). True when this call made the record (none was there): the upload, if refused,
 * removes it again while unbound (releasePhotoBlob).
 */
export async function recordPhotoBlob(sql: SqlExecutor, sha256: string, now: Date): Promise<boolean> {
  const made = await sql.query(
    'INSERT INTO auction_photo_blobs (sha256, recorded_at) VALUES ($1, $2) ON CONFLICT (sha256) DO NOTHING RETURNING sha256',
    [sha256, now],
  );
  return made.length > 0;
}

/** Marks the SHA-256 bound, in the transaction of the `photographed` event that binds it (recorded again if it was released meanwhile). */
export async function markPhotoBlobBound(sql: SqlExecutor, sha256: string, now: Date): Promise<void> {
  await sql.query(
    `INSERT INTO auction_photo_blobs (sha256, recorded_at, bound_at) VALUES ($1, $2, $2)
     ON CONFLICT (sha256) DO UPDATE SET bound_at = coalesce(auction_photo_blobs.bound_at, excluded.bound_at)`,
    [sha256, now],
  );
}

/**
 * Removes the record a refused upload made, unless a binding has marked it since. An upload of the
 * same bytes still deciding, which counted on it, records it again as bound in its own transaction
 * and puts the blob back if it finds it gone (handlers/bind-photo.ts).
 */
export async function releasePhotoBlob(sql: SqlExecutor, sha256: string): Promise<void> {
  await sql.query('DELETE FROM auction_photo_blobs WHERE sha256 = $1 AND bound_at IS NULL', [sha256]);
}

export async function isPhotoBlob(sql: SqlExecutor, sha256: string): Promise<boolean> {
  const rows = await sql.query<{ found: number }>('SELECT 1 AS found FROM auction_photo_blobs WHERE sha256 = $1', [sha256]);
  return rows.length > 0;
}

/**
 * Once per database: copies the SHA-256 of every `photographed` event already in the event store
 * into the table (photos bound before it existed). Replicas starting together may both copy; the
 * inserts are idempotent.
 */
export async function backfillPhotoBlobs(sql: SqlExecutor, eventStore: EventStore, now: Date): Promise<number> {
  const done = await sql.query('SELECT 1 FROM auction_photo_blobs_backfill');
  if (done.length > 0) return 0;
  let copied = 0;
  let after: string | undefined;
  for (;;) {
    const page = await eventStore.readAll({ ...(after ? { after } : {}), limit: 1_000 });
    for (const event of page.events) {
      if (event.type === 'photographed' && typeof event.data.sha256 === 'string') {
        await markPhotoBlobBound(sql, event.data.sha256, now);
        copied += 1;
      }
    }
    if (page.events.length === 0 || page.cursor === after) break;
    after = page.cursor;
  }
  await sql.query('INSERT INTO auction_photo_blobs_backfill (done_at) VALUES ($1) ON CONFLICT (id) DO NOTHING', [now]);
  return copied;
}
