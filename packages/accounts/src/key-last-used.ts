import type { SqlExecutor } from '@hallmark/sql';

// When each API key was last used (table api_key_last_used, accounts migration 0007). The gateway
// notes uses in memory and writes them here in batches, never once per request.

/**
 * Records that these keys were used at `at`, in one statement; a later time already stored stays.
 * Keys that no longer exist are left out (their use does not matter any more).
 */
export async function writeKeysLastUsed(sql: SqlExecutor, keyIds: readonly string[], at: Date): Promise<void> {
  if (keyIds.length === 0) return;
  await sql.query(
    `INSERT INTO api_key_last_used (key_id, last_used_at)
     SELECT k.id, $2 FROM api_keys k WHERE k.id = ANY($1::text[])
     ON CONFLICT (key_id) DO UPDATE SET last_used_at = GREATEST(api_key_last_used.last_used_at, excluded.last_used_at)`,
    [keyIds, at],
  );
}

/** When each of these keys was last used, by id; a key never used (or not yet written) is absent. */
export async function findKeysLastUsed(sql: SqlExecutor, keyIds: readonly string[]): Promise<Map<string, Date>> {
  if (keyIds.length === 0) return new Map();
  const rows = await sql.query<{ key_id: string; last_used_at: Date | string }>(
    'SELECT key_id, last_used_at FROM api_key_last_used WHERE key_id = ANY($1::text[])',
    [keyIds],
  );
  return new Map(rows.map((row) => [row.key_id, new Date(row.last_used_at)]));
}
