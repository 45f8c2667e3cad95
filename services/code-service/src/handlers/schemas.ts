import { maxMetadataBytes } from '@hallmark/codes';
import {
  type CreateSchemaBody,
  decodeCursor,
  encodeCursor,
  HallmarkError,
  type ListSchemasQuery,
  type Principal,
  type SchemaList,
  type SchemaView,
  type UpdateSchemaBody,
  type ValidationOutcome,
} from '@hallmark/contracts';
import { randomHex } from '@hallmark/crypto';
import type { EventStore } from '@hallmark/event-store';
import { accountStream } from '@hallmark/provenance';
import {
  compileMetadataSchema,
  type FieldDefinition,
  type MetadataValidator,
  schemaTemplates,
  UnusableDefinitionError,
} from '@hallmark/schemas';
import { cursorMicrosecondsPattern, type SqlDatabase, type SqlExecutor } from '@hallmark/sql';
import { decide, isDomainError, type SchemaCommand, type SchemaContent } from '../domain/metadata-schema.ts';
import {
  findSchema,
  listSchemas,
  loadSchemaState,
  SchemaMoved,
  type StoredSchema,
  schemaView,
  writeSchemaEvent,
} from '../store/schema-store.ts';
import { createValidatorCache } from './validator-cache.ts';

export interface SchemaDeps {
  db: SqlDatabase;
  eventStore: EventStore;
  clock: () => Date;
}

/** Schema changes go to the account's own stream, so an export can show which version a code used. */
const templateEpoch = new Date('2026-11-01T00:00:00Z');
const templates = new Map(
  schemaTemplates.map((template) => [
    template.id,
    {
      ...template,
      version: 1,
      additionalProperties: template.additionalProperties ?? false,
      createdAt: templateEpoch,
      updatedAt: templateEpoch,
    },
  ]),
);

const notFound = (id: string) => new HallmarkError('NOT_FOUND', `There is no schema ${id}.`, { id });

/**
 * Compiled validators kept (validator-cache.ts), the least recently used dropped first: up to ~95 KB
 * each at 200 fields (measured), so at most ~95 MB. (Clearing them all at 10,000 bounded nothing
 * while Ajv kept every compile.) An account's environment keeps at most 100 of them: one cycling
 * through more versions recompiles its own (~17 ms each at 200 fields, on the event loop), not
 * other accounts'.
 */
const maxCompiledValidators = 1_000;
const maxCompiledValidatorsPerOwner = 100;

/**
 * A stored version that no validator can be made of: one saved before its definition was checked as
 * it is now (a field named `__proto__` made every check of it a 500). The owner fixes it with PATCH.
 */
/** The most live schemas an account may have per environment (each is a stream of versions, listed and cached). */
export const maxSchemasPerAccount = 1_000;

/** Takes a place for one more schema of the owner, or refuses (409, nothing stored); creations at once take it in turn. */
async function takeSchemaPlace(sql: SqlExecutor, owner: Principal): Promise<void> {
  await sql.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
    `hallmark:schemas:${owner.accountId}:${owner.environment}`,
  ]);
  const [row] = await sql.query<{ schemas: string | number }>(
    `SELECT count(*) AS schemas FROM (
       SELECT 1 FROM metadata_schemas WHERE account_id = $1 AND environment = $2 AND deleted_at IS NULL LIMIT $3) AS live`,
    [owner.accountId, owner.environment, maxSchemasPerAccount],
  );
  if (Number(row?.schemas ?? 0) >= maxSchemasPerAccount) {
    throw new HallmarkError(
      'CONFLICT',
      `This account has ${maxSchemasPerAccount.toLocaleString('en')} schemas in this environment, the most it may have: delete schemas no longer used.`,
      { limit: maxSchemasPerAccount },
    );
  }
}

const unusableSchema = (schema: StoredSchema, error: UnusableDefinitionError) =>
  new HallmarkError(
    'CONFLICT',
    `Schema ${schema.id} version ${schema.version} cannot check data: its definition is not valid any more ` +
      `(${error.problems.map((problem) => `${problem.field} ${problem.message}`).join('; ')}). ` +
      `Send PATCH /schemas/${schema.id} with good fields.`,
    {
      id: schema.id,
      version: schema.version,
      fields: error.problems.map((problem) => ({
        field: `fields.${problem.field}`.replace('fields.fields', 'fields'),
        message: problem.message,
      })),
    },
    { cause: error },
  );

/** Validators are compiled once per schema version and kept while used (a version never changes). */
export function createSchemaCatalog(deps: SchemaDeps) {
  /** By owner (templates are everyone's) and `id@version`. */
  const compiled = createValidatorCache<MetadataValidator>({
    maxEntries: maxCompiledValidators,
    maxPerOwner: maxCompiledValidatorsPerOwner,
  });
  // A version never changes, so it is kept (while its schema lives); "the current version" is kept
  // 5 s, and dropped here at once on update or delete (another replica may answer the previous
  // version, or a deleted schema's, for up to 5 s, and says which version it used).
  const found = new Map<string, { schema: StoredSchema; until: number }>();
  const forget = (owner: Principal, id: string) => {
    for (const key of found.keys()) if (key.startsWith(`${owner.accountId}|${owner.environment}|${id}|`)) found.delete(key);
  };

  /**
   * Load, decide, append, answer: the schema's rows are written in its event's transaction, guarded
   * by the version the decision was made at; a change that lost a race to another is decided again
   * on the new state (two updates both land, one after the other, as before).
   */
  const change = async (owner: Principal, command: SchemaCommand): Promise<StoredSchema | undefined> => {
    for (let attempt = 1; ; attempt += 1) {
      const state = await loadSchemaState(deps.db, owner, command.schemaId);
      const decision = decide(command, state);
      if (isDomainError(decision)) throw new HallmarkError(decision.code, decision.message, decision.details);
      const decidedAt = state.status === 'absent' ? 0 : state.version;
      let written: StoredSchema | undefined;
      try {
        await deps.eventStore.append(
          accountStream(owner),
          decision.map((event) => ({ type: event.type, data: event.data })),
          {
            expectedVersion: 'any',
            readModels: {
              db: deps.db,
              async write(sql) {
                if (command.type === 'CreateSchema') await takeSchemaPlace(sql, owner);
                for (const event of decision) written = await writeSchemaEvent(sql, owner, event, decidedAt);
              },
            },
          },
        );
        return written;
      } catch (error) {
        if (!(error instanceof SchemaMoved)) throw error;
        if (attempt >= 20)
          throw new HallmarkError('CONFLICT', 'The schema changed while this request was applied; send it again.', {
            id: command.schemaId,
          });
      }
    }
  };

  /** A schema the owner may read: its own, or a template. */
  const read = async (owner: Principal, id: string, version?: number): Promise<{ schema: StoredSchema; template: boolean }> => {
    const template = templates.get(id);
    if (template) {
      if (version !== undefined && version !== 1) throw notFound(`${id} version ${version}`);
      return { schema: template, template: true };
    }
    const key = `${owner.accountId}|${owner.environment}|${id}|${version ?? 'current'}`;
    const cached = found.get(key);
    if (cached && cached.until > Date.now()) {
      // A version is kept 10 min, but only while its schema lives: a deletion on another replica is
      // seen here within the current version's 5 s (it was seen only when the version's 10 min ran out).
      if (version !== undefined) await read(owner, id);
      return { schema: cached.schema, template: false };
    }
    const schema = await findSchema(deps.db, owner, id, version);
    if (!schema) throw notFound(version === undefined ? id : `${id} version ${version}`);
    if (found.size > 10_000) found.clear();
    found.set(key, { schema, until: Date.now() + (version === undefined ? 5_000 : 600_000) });
    return { schema, template: false };
  };

  /** The version's validator; CONFLICT for a stored version no validator can be made of. */
  const validatorOf = (owner: Principal, found: { schema: StoredSchema; template: boolean }): MetadataValidator => {
    const { schema } = found;
    const holder = found.template ? 'templates' : `${owner.accountId}|${owner.environment}`;
    return compiled.get(holder, `${schema.id}@${schema.version}`, () => {
      try {
        return compileMetadataSchema(schema);
      } catch (error) {
        throw error instanceof UnusableDefinitionError ? unusableSchema(schema, error) : error;
      }
    });
  };

  return {
    async create(owner: Principal, body: CreateSchemaBody): Promise<SchemaView> {
      let definition: SchemaContent;
      if (body.copyFrom !== undefined) {
        const template = templates.get(body.copyFrom);
        if (!template)
          throw new HallmarkError('VALIDATION_ERROR', `There is no template ${body.copyFrom}.`, {
            fields: [{ field: 'copyFrom', in: 'body', message: 'is not a template id' }],
          });
        definition = {
          name: body.name ?? template.name,
          vertical: body.vertical ?? template.vertical,
          fields: (body.fields as FieldDefinition[] | undefined) ?? template.fields,
          additionalProperties: body.additionalProperties ?? template.additionalProperties,
        };
      } else {
        const missing = (['name', 'vertical', 'fields'] as const).filter((field) => body[field] === undefined);
        if (missing.length > 0) {
          throw new HallmarkError(
            'VALIDATION_ERROR',
            `Invalid request: ${missing.join(', ')} required (or copyFrom a template).`,
            {
              fields: missing.map((field) => ({ field, in: 'body', message: 'is required' })),
            },
          );
        }
        definition = {
          name: body.name as string,
          vertical: body.vertical as string,
          fields: body.fields as FieldDefinition[],
          additionalProperties: body.additionalProperties ?? false,
        };
      }
      const schemaId = `sch_${randomHex(10)}`;
      const schema = await change(owner, { type: 'CreateSchema', schemaId, content: definition, copiedFrom: body.copyFrom });
      if (!schema) throw new Error(`schema ${schemaId} was created but not found`);
      return schemaView(schema);
    },

    async list(owner: Principal, query: ListSchemasQuery): Promise<SchemaList> {
      const limit = query.limit ?? 20;
      if (query.templates) {
        // Paged by id like any list, so `limit` and the cursor mean the same as for a brand's own schemas.
        const [afterId] = query.cursor ? decodeCursor(query.cursor, [/^.{1,100}$/]) : [];
        const all = [...templates.values()]
          .filter((template) => !query.vertical || template.vertical === query.vertical)
          .filter((template) => !afterId || template.id > afterId)
          .sort((a, b) => (a.id < b.id ? -1 : 1));
        const page = all.slice(0, limit);
        const last = page.at(-1);
        const hasMore = all.length > limit;
        return {
          schemas: page.map((template) => schemaView(template, true)),
          pagination: { limit, nextCursor: hasMore && last ? encodeCursor([last.id]) : null, hasMore },
        };
      }
      const [afterUs, afterId] = query.cursor ? decodeCursor(query.cursor, [cursorMicrosecondsPattern, /^.{1,100}$/]) : [];
      const after = afterUs && afterId ? { createdUs: afterUs, id: afterId } : undefined;
      const rows = await listSchemas(deps.db, owner, { limit: limit + 1, vertical: query.vertical, after });
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      const hasMore = rows.length > limit;
      return {
        schemas: page.map((row) => schemaView(row)),
        pagination: { limit, hasMore, nextCursor: hasMore && last ? encodeCursor([last.createdUs, last.id]) : null },
      };
    },

    async get(owner: Principal, id: string, version?: number): Promise<SchemaView> {
      const { schema, template } = await read(owner, id, version);
      return schemaView(schema, template);
    },

    async update(owner: Principal, id: string, body: UpdateSchemaBody): Promise<SchemaView> {
      if (templates.has(id))
        throw new HallmarkError('CONFLICT', 'Templates are read-only; copy one with POST /schemas { copyFrom }.', { id });
      const updated = await change(owner, {
        type: 'UpdateSchema',
        schemaId: id,
        change: {
          ...(body.name !== undefined ? { name: body.name } : {}),
          ...(body.vertical !== undefined ? { vertical: body.vertical } : {}),
          ...(body.fields !== undefined ? { fields: body.fields as FieldDefinition[] } : {}),
          ...(body.additionalProperties !== undefined ? { additionalProperties: body.additionalProperties } : {}),
        },
      });
      if (!updated) throw notFound(id);
      forget(owner, id);
      return schemaView(updated);
    },

    async remove(owner: Principal, id: string): Promise<void> {
      if (templates.has(id)) throw new HallmarkError('CONFLICT', 'Templates are read-only.', { id });
      await change(owner, { type: 'DeleteSchema', schemaId: id });
      forget(owner, id);
    },

    async validate(owner: Principal, id: string, version: number | undefined, data: unknown): Promise<ValidationOutcome> {
      // Data larger than any code's metadata may be is no metadata, and could only cost the check's time.
      if (Buffer.byteLength(JSON.stringify(data)) > maxMetadataBytes) {
        throw new HallmarkError(
          'VALIDATION_ERROR',
          `The data is larger than ${maxMetadataBytes / 1024} KiB as JSON, the most a code's metadata may be.`,
          {
            fields: [{ field: '(data)', in: 'body', message: `is larger than ${maxMetadataBytes / 1024} KiB as JSON` }],
          },
        );
      }
      const found = await read(owner, id, version);
      return { ...validatorOf(owner, found).validate(data), schemaId: found.schema.id, version: found.schema.version };
    },

    /** For generation: the outcome, or undefined when no schema is asked for. A missing schema is a VALIDATION_ERROR. */
    async validateForGeneration(owner: Principal, schemaId: string, version: number | undefined, metadata: unknown) {
      // Missing is NOT_FOUND alone: a database that failed to answer fails the call (503), where it
      // was answered VALIDATION_ERROR "is not a schema of this account", and a client dropped the items.
      const found = await read(owner, schemaId, version).catch((error: unknown) => {
        if (error instanceof HallmarkError && error.code === 'NOT_FOUND') return undefined;
        throw error;
      });
      if (!found) return { missing: true as const };
      let outcome: ReturnType<MetadataValidator['validate']>;
      try {
        outcome = validatorOf(owner, found).validate(metadata);
      } catch (error) {
        // This item's metadata cannot be checked: it is refused (VALIDATION_ERROR), the batch's others are not.
        if (!(error instanceof HallmarkError)) throw error;
        outcome = { isValid: false, errors: [{ field: '(schema)', message: error.message }], errorsTruncated: false };
      }
      return { missing: false as const, schemaId: found.schema.id, version: found.schema.version, ...outcome };
    },
  };
}
export type SchemaCatalog = ReturnType<typeof createSchemaCatalog>;
