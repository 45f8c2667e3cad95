import type { Principal, SchemaView } from '@hallmark/contracts';
import type { SchemaDefinition } from '@hallmark/schemas';
import { cursorMicroseconds, cursorTime, type SqlExecutor } from '@hallmark/sql';
import type { SchemaContent, SchemaEvent, SchemaState } from '../domain/metadata-schema.ts';

export interface StoredSchema extends SchemaDefinition {
  id: string;
  name: string;
  vertical: string;
  version: number;
  additionalProperties: boolean;
  createdAt: Date;
  updatedAt: Date;
}

interface Row {
  id: string;
  name: string;
  vertical: string;
  version: number;
  fields: SchemaDefinition['fields'];
  additional_properties: boolean;
  created_at: Date | string;
  updated_at: Date | string;
  created_us?: string;
}

const toStored = (row: Row): StoredSchema => ({
  id: row.id,
  name: row.name,
  vertical: row.vertical,
  version: Number(row.version),
  fields: row.fields,
  additionalProperties: row.additional_properties,
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at),
});

export function schemaView(schema: StoredSchema, template = false): SchemaView {
  return {
    id: schema.id,
    name: schema.name,
    vertical: schema.vertical,
    version: schema.version,
    fields: schema.fields,
    additionalProperties: schema.additionalProperties,
    template,
    createdAt: schema.createdAt.toISOString(),
    updatedAt: schema.updatedAt.toISOString(),
  };
}

const selectVersion = `SELECT s.id, v.name, v.vertical, v.version, v.fields, v.additional_properties, s.created_at, v.created_at AS updated_at
  FROM metadata_schemas s JOIN metadata_schema_versions v ON v.schema_id = s.id`;

/** A live schema of this owner, at `version` or its current one. */
export async function findSchema(
  sql: SqlExecutor,
  owner: Principal,
  id: string,
  version?: number,
): Promise<StoredSchema | undefined> {
  const rows = await sql.query<Row>(
    `${selectVersion}
     WHERE s.id = $1 AND s.account_id = $2 AND s.environment = $3 AND s.deleted_at IS NULL
       AND v.version = COALESCE($4::integer, s.current_version)`,
    [id, owner.accountId, owner.environment, version ?? null],
  );
  return rows[0] ? toStored(rows[0]) : undefined;
}

/** The schema's state for the decider: absent (none of this owner's), live or deleted, with its current version. */
export async function loadSchemaState(sql: SqlExecutor, owner: Principal, id: string): Promise<SchemaState> {
  const rows = await sql.query<Row & { deleted: boolean }>(
    `SELECT s.id, v.name, v.vertical, v.version, v.fields, v.additional_properties, s.created_at, v.created_at AS updated_at,
            s.deleted_at IS NOT NULL AS deleted
       FROM metadata_schemas s JOIN metadata_schema_versions v ON v.schema_id = s.id AND v.version = s.current_version
      WHERE s.id = $1 AND s.account_id = $2 AND s.environment = $3`,
    [id, owner.accountId, owner.environment],
  );
  const row = rows[0];
  if (!row) return { status: 'absent' };
  return {
    status: row.deleted ? 'deleted' : 'live',
    schemaId: row.id,
    version: Number(row.version),
    content: {
      name: row.name,
      vertical: row.vertical,
      fields: row.fields as SchemaContent['fields'],
      additionalProperties: row.additional_properties,
    },
  };
}

/** The schema changed while the change was decided: nothing is stored, decide again. */
export class SchemaMoved extends Error {
  constructor(readonly schemaId: string) {
    super(`Schema ${schemaId} changed while this change was decided.`);
  }
}

/**
 * Writes one schema event to the rows, in the event's transaction, guarded by the version the
 * decision was made at (`decidedAt`: SchemaMoved when the schema moved since). Resolves with the
 * schema as it now is (undefined after a deletion).
 */
export async function writeSchemaEvent(
  sql: SqlExecutor,
  owner: Principal,
  event: SchemaEvent,
  decidedAt: number,
): Promise<StoredSchema | undefined> {
  const id = event.data.schemaId;
  const insertVersion = (version: number, content: SchemaContent) =>
    sql.query(
      `INSERT INTO metadata_schema_versions (schema_id, version, name, vertical, fields, additional_properties) VALUES ($1, $2, $3, $4, $5, $6)`,
      [id, version, content.name, content.vertical, JSON.stringify(content.fields), content.additionalProperties],
    );
  switch (event.type) {
    case 'schema.created': {
      await sql.query(
        `INSERT INTO metadata_schemas (id, account_id, environment, name, vertical, current_version) VALUES ($1, $2, $3, $4, $5, 1)`,
        [id, owner.accountId, owner.environment, event.data.name, event.data.vertical],
      );
      await insertVersion(1, event.data);
      return findSchema(sql, owner, id);
    }
    case 'schema.updated': {
      const moved = await sql.query(
        `UPDATE metadata_schemas SET current_version = $4, name = $5, vertical = $6, updated_at = clock_timestamp()
          WHERE id = $1 AND account_id = $2 AND environment = $3 AND deleted_at IS NULL AND current_version = $7 RETURNING id`,
        [id, owner.accountId, owner.environment, event.data.version, event.data.name, event.data.vertical, decidedAt],
      );
      if (moved.length === 0) throw new SchemaMoved(id);
      await insertVersion(event.data.version, event.data);
      return findSchema(sql, owner, id);
    }
    case 'schema.deleted': {
      const moved = await sql.query(
        `UPDATE metadata_schemas SET deleted_at = clock_timestamp()
          WHERE id = $1 AND account_id = $2 AND environment = $3 AND deleted_at IS NULL AND current_version = $4 RETURNING id`,
        [id, owner.accountId, owner.environment, decidedAt],
      );
      if (moved.length === 0) throw new SchemaMoved(id);
      return undefined;
    }
    default:
      return event satisfies never;
  }
}

/** Newest first; the cursor is the last row's creation time in microseconds and id. */
export async function listSchemas(
  sql: SqlExecutor,
  owner: Principal,
  options: { limit: number; vertical?: string | undefined; after?: { createdUs: string; id: string } | undefined },
): Promise<Array<StoredSchema & { createdUs: string }>> {
  const rows = await sql.query<Row>(
    // Ordered on metadata_schemas_by_owner's columns themselves (a value computed from created_at
    // sorted all the owner's schemas for a page of one).
    `${selectVersion.replace('SELECT ', `SELECT ${cursorMicroseconds('s.created_at')} AS created_us, `)}
     WHERE s.account_id = $1 AND s.environment = $2 AND s.deleted_at IS NULL AND v.version = s.current_version
       AND ($3::text IS NULL OR s.vertical = $3)
       AND ($4::bigint IS NULL OR (s.created_at, s.id) < (${cursorTime('$4')}, $5::text))
     ORDER BY s.created_at DESC, s.id DESC
     LIMIT $6`,
    [
      owner.accountId,
      owner.environment,
      options.vertical ?? null,
      options.after?.createdUs ?? null,
      options.after?.id ?? null,
      options.limit,
    ],
  );
  return rows.map((row) => ({ ...toStored(row), createdUs: row.created_us ?? '0' }));
}
