import type { Principal } from '@hallmark/contracts';
import type { EventStore } from '@hallmark/event-store';
import { assetIdOfStream } from '@hallmark/provenance';
import type { SqlExecutor } from '@hallmark/sql';
import type { PhotoStorage } from '../domain/object.ts';

/**
 * What an account's photos take in one environment: the sum of its objects' `photo_bytes` (every
 * photo bound, replaced ones included), read from the read model's partial index, and its limit.
 * Read before a photo is decoded (a quick refusal), and again in the binding's transaction under the
 * account's lock (handlers/bind-photo.ts), which keeps uploads at once within the limit.
 */
export async function photoStorageOf(sql: SqlExecutor, owner: Principal, limitBytes: number): Promise<PhotoStorage> {
  const [row] = await sql.query<{ bytes: string | null }>(
    `SELECT sum(photo_bytes)::text AS bytes FROM auction_objects
      WHERE account_id = $1 AND environment = $2 AND photo_bytes > 0`,
    [owner.accountId, owner.environment],
  );
  return { usedBytes: Number(row?.bytes ?? 0), limitBytes };
}

/**
 * Counts the photos of objects whose `photo_bytes` was never written (registered before auction
 * migration 0005) from their `photographed` events, once: nothing to do when every object has it.
 * A row written meanwhile by a change of its object (the whole state, counted) is left as it is.
 */
export async function backfillPhotoBytes(sql: SqlExecutor, eventStore: EventStore): Promise<number> {
  const uncounted = await sql.query('SELECT 1 FROM auction_objects WHERE photo_bytes IS NULL LIMIT 1');
  if (uncounted.length === 0) return 0;
  const bytesByObject = new Map<string, number>();
  let after: string | undefined;
  for (;;) {
    const page = await eventStore.readAll({ ...(after ? { after } : {}), limit: 1_000 });
    for (const event of page.events) {
      const objectId = assetIdOfStream(event.streamId);
      const { sha256, size } = event.data;
      if (event.type !== 'photographed' || !objectId || typeof sha256 !== 'string' || typeof size !== 'number') continue;
      bytesByObject.set(objectId, (bytesByObject.get(objectId) ?? 0) + size);
    }
    if (page.events.length === 0 || page.cursor === after) break;
    after = page.cursor;
  }
  for (const [objectId, bytes] of bytesByObject) {
    await sql.query('UPDATE auction_objects SET photo_bytes = $2 WHERE id = $1 AND photo_bytes IS NULL', [objectId, bytes]);
  }
  await sql.query('UPDATE auction_objects SET photo_bytes = 0 WHERE photo_bytes IS NULL');
  return bytesByObject.size;
}
