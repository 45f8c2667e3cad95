import { fileURLToPath } from 'node:url';
import type { Environment, ObjectStatus, Principal } from '@hallmark/contracts';
import { cursorMicroseconds, cursorTime, loadMigrations, runMigrations, type SqlDatabase, type SqlExecutor } from '@hallmark/sql';
import { type ObjectState, securityFigures } from '../object-history.ts';

const folder = fileURLToPath(new URL('../../migrations', import.meta.url));

export async function migrateAuction(db: SqlDatabase): Promise<void> {
  await runMigrations(db, await loadMigrations('auction-service', folder));
}

export interface ObjectRow {
  id: string;
  account_id: string;
  environment: Environment;
  service_serial: string;
  title: string;
  category: string;
  status: ObjectStatus;
  security_tier: string;
  anchor_count: number;
  entropy_bits: number;
  spatial_relations: number;
  photo_count: number;
  photo_required: number;
  registered_at: Date | string;
  registered_us: string;
}

const columns = `id, account_id, environment, service_serial, title, category, status, security_tier, anchor_count,
  entropy_bits, spatial_relations, photo_count, photo_required, registered_at,
  ${cursorMicroseconds('registered_at')} AS registered_us`;

/** Writes the read model of an object from its folded history; an older version never overwrites a newer one. */
export async function saveObject(sql: SqlExecutor, state: ObjectState, now: Date): Promise<void> {
  const figures = securityFigures(state);
  await sql.query(
    `INSERT INTO auction_objects (id, account_id, environment, service_serial, title, category, status, owner_id, security_tier,
       anchor_count, entropy_bits, spatial_relations, photo_count, photo_required, stream_version, registered_at, updated_at,
       photo_bytes)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
     ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status, owner_id = EXCLUDED.owner_id,
       security_tier = EXCLUDED.security_tier, anchor_count = EXCLUDED.anchor_count, entropy_bits = EXCLUDED.entropy_bits,
       spatial_relations = EXCLUDED.spatial_relations, photo_count = EXCLUDED.photo_count,
       stream_version = EXCLUDED.stream_version, updated_at = EXCLUDED.updated_at, photo_bytes = EXCLUDED.photo_bytes
     WHERE auction_objects.stream_version < EXCLUDED.stream_version`,
    [
      state.id,
      state.owner.accountId,
      state.owner.environment,
      state.serial,
      state.title,
      state.category,
      state.status,
      state.ownerId,
      figures.security_tier,
      figures.anchor_count,
      figures.entropy_bits,
      figures.spatial_relations,
      figures.photo_status.count,
      figures.photo_status.required,
      state.version,
      state.registeredAt,
      now,
      state.photoBytes,
    ],
  );
}

/** The owner's object by id or service serial. */
export async function findObjectId(sql: SqlExecutor, owner: Principal, idOrSerial: string): Promise<string | undefined> {
  const rows = await sql.query<{ id: string }>(
    `SELECT id FROM auction_objects WHERE account_id = $1 AND environment = $2 AND (id = $3 OR service_serial = $3)`,
    [owner.accountId, owner.environment, idOrSerial],
  );
  return rows[0]?.id;
}

/** Any account's object by service serial: the public verification looks objects up this way. */
export async function findObjectIdBySerial(sql: SqlExecutor, serial: string): Promise<string | undefined> {
  const rows = await sql.query<{ id: string }>('SELECT id FROM auction_objects WHERE service_serial = $1', [serial]);
  return rows[0]?.id;
}

export async function listObjects(
  sql: SqlExecutor,
  owner: Principal,
  options: { status?: ObjectStatus; limit: number; after?: { registeredUs: string; id: string } },
): Promise<ObjectRow[]> {
  const params: unknown[] = [owner.accountId, owner.environment, options.limit];
  let filter = '';
  if (options.status) {
    params.push(options.status);
    filter += ` AND status = $${params.length}`;
  }
  if (options.after) {
    params.push(options.after.registeredUs, options.after.id);
    filter += ` AND (registered_at, id) < (${cursorTime(`$${params.length - 1}`)}, $${params.length})`;
  }
  return sql.query<ObjectRow>(
    `SELECT ${columns} FROM auction_objects WHERE account_id = $1 AND environment = $2${filter}
     ORDER BY registered_at DESC, id DESC LIMIT $3`,
    params,
  );
}
