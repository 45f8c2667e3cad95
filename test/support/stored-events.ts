import type { SqlExecutor } from '@hallmark/sql';

type JsonObject = Record<string, unknown>;

/** A stored event's data and metadata, as a rewrite sees and returns them. */
export interface EventBody {
  data: JsonObject;
  metadata: JsonObject;
}

/**
 * Rewrites a stream's first event where the event store keeps it, as someone with write access to
 * the database could: its row of `events`, or its entry in a pack (`event_packs`, event store
 * migration 0003: a generated code's first event). Fails when the stream has no first event.
 */
export async function rewriteFirstEvent(
  db: SqlExecutor,
  streamId: string,
  rewrite: (event: EventBody) => EventBody,
): Promise<void> {
  const [packed] = await db.query<{ pack_position: string; pack_index: number }>(
    'SELECT pack_position::text, pack_index FROM packed_streams WHERE stream_id = $1',
    [streamId],
  );
  if (packed) {
    const [pack] = await db.query<{ entry: EventBody & JsonObject }>(
      'SELECT events -> $2::int AS entry FROM event_packs WHERE global_position = $1::bigint',
      [packed.pack_position, packed.pack_index],
    );
    if (!pack) throw new Error(`no pack holds the first event of ${streamId}`);
    const rewritten = rewrite({ data: pack.entry.data, metadata: pack.entry.metadata });
    await db.query(
      'UPDATE event_packs SET events = jsonb_set(events, ARRAY[$2::text], $3::jsonb) WHERE global_position = $1::bigint',
      [packed.pack_position, String(packed.pack_index), JSON.stringify({ ...pack.entry, ...rewritten })],
    );
    return;
  }
  const [row] = await db.query<EventBody>('SELECT data, metadata FROM events WHERE stream_id = $1 AND stream_version = 1', [
    streamId,
  ]);
  if (!row) throw new Error(`no first event of ${streamId}`);
  const rewritten = rewrite(row);
  await db.query('UPDATE events SET data = $2::jsonb, metadata = $3::jsonb WHERE stream_id = $1 AND stream_version = 1', [
    streamId,
    JSON.stringify(rewritten.data),
    JSON.stringify(rewritten.metadata),
  ]);
}

/**
 * Creates the trigger `name` that runs the trigger function `fn` (`BEFORE` or `AFTER`) on the insert
 * of a generated code's first event of one of `serials`, wherever the event store puts it: a pack
 * (`event_packs`, the codes of one statement together) or, for a code stored alone, a row of
 * `events` (event store migration 0003). One trigger of that name on each table.
 */
export async function triggerOnCodeEvents(
  query: (text: string) => Promise<unknown>,
  { name, when, serials, fn }: { name: string; when: 'BEFORE' | 'AFTER'; serials: readonly string[]; fn: string },
): Promise<void> {
  const listed = serials.map((serial) => `'${serial}'`).join(', ');
  const inPack = serials.map((serial) => `@ == "${serial}"`).join(' || ');
  await query(
    `CREATE TRIGGER ${name} ${when} INSERT ON events FOR EACH ROW
     WHEN (NEW.data->>'serial' IN (${listed})) EXECUTE FUNCTION ${fn}()`,
  );
  await query(
    `CREATE TRIGGER ${name} ${when} INSERT ON event_packs FOR EACH ROW
     WHEN (jsonb_path_exists(NEW.events, '$[*].data.serial ? (${inPack})')) EXECUTE FUNCTION ${fn}()`,
  );
}

/** Removes the trigger `name` triggerOnCodeEvents made, from both tables it is on. */
export async function dropCodeEventsTrigger(query: (text: string) => Promise<unknown>, name: string): Promise<void> {
  for (const table of ['events', 'event_packs']) await query(`DROP TRIGGER ${name} ON ${table}`);
}
