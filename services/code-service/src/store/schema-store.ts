import type { Principal, SchemaView } from '@hallmark/contracts';
import type { SchemaDefinition } from '@hallmark/schemas';
import type { SqlDatabase, SqlExecutor } from '@hallmark/sql';

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

export async function insertSchema(
  db: SqlDatabase,
  owner: Principal,
  schema: { id: string; name: string; vertical: string; fields: SchemaDefinition['fields']; additionalProperties: boolean },
): Promise<StoredSchema> {
  return db.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO metadata_schemas (id, account_id, environment, name, vertical, current_version) VALUES ($1, $2, $3, $4, $5, 1)`,
      [schema.id, owner.accountId, owner.environment, schema.name, schema.vertical],
    );
    await tx.query(
      `INSERT INTO metadata_schema_versions (schema_id, version, name, vertical, fields, additional_properties) VALUES ($1, 1, $2, $3, $4, $5)`,
      [schema.id, schema.name, schema.vertical, JSON.stringify(schema.fields), schema.additionalProperties],
    );
    return (await findSchema(tx, owner, schema.id)) as StoredSchema;
  });
}

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

/** Writes a new version from the current one changed by `change`; undefined when there is no such schema. */
export async function updateSchema(
  db: SqlDatabase,
  owner: Principal,
  id: string,
  change: (current: StoredSchema) => {
    name: string;
    vertical: string;
    fields: SchemaDefinition['fields'];
    additionalProperties: boolean;
  },
): Promise<StoredSchema | undefined> {
  return db.transaction(async (tx) => {
    const locked = await tx.query<{ current_version: number }>(
      `SELECT current_version FROM metadata_schemas WHERE id = $1 AND account_id = $2 AND environment = $3 AND deleted_at IS NULL FOR UPDATE`,
      [id, owner.accountId, owner.environment],
    );
    if (!locked[0]) return undefined;
    const current = (await findSchema(tx, owner, id)) as StoredSchema;
    const next = change(current);
    const version = Number(locked[0].current_version) + 1;
    await tx.query(
      `INSERT INTO metadata_schema_versions (schema_id, version, name, vertical, fields, additional_properties) VALUES ($1, $2, $3, $4, $5, $6)`,
      [id, version, next.name, next.vertical, JSON.stringify(next.fields), next.additionalProperties],
    );
    await tx.query(
      `UPDATE metadata_schemas SET current_version = $2, name = $3, vertical = $4, updated_at = clock_timestamp() WHERE id = $1`,
      [id, version, next.name, next.vertical],
    );
    return findSchema(tx, owner, id);
  });
}

export async function deleteSchema(sql: SqlExecutor, owner: Principal, id: string): Promise<boolean> {
  const rows = await sql.query(
    `UPDATE metadata_schemas SET deleted_at = clock_timestamp() WHERE id = $1 AND account_id = $2 AND environment = $3 AND deleted_at IS NULL RETURNING id`,
    [id, owner.accountId, owner.environment],
  );
  return rows.length === 1;
}

/** Newest first; the cursor is the last row's creation time in microseconds and id. */
export async function listSchemas(
  sql: SqlExecutor,
  owner: Principal,
  options: { limit: number; vertical?: string | undefined; after?: { createdUs: string; id: string } | undefined },
): Promise<Array<StoredSchema & { createdUs: string }>> {
  const rows = await sql.query<Row>(
    `SELECT * FROM (
       ${selectVersion}
       WHERE s.account_id = $1 AND s.environment = $2 AND s.deleted_at IS NULL AND v.version = s.current_version
         AND ($3::text IS NULL OR s.vertical = $3)
     ) AS current
     CROSS JOIN LATERAL (SELECT (extract(epoch FROM current.created_at) * 1000000)::bigint::text AS created_us) AS t
     WHERE $4::bigint IS NULL OR (t.created_us::bigint, current.id) < ($4::bigint, $5::text)
     ORDER BY t.created_us::bigint DESC, current.id DESC
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
