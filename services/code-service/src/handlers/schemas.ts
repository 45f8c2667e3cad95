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
  checkDefinition,
  compileMetadataSchema,
  type FieldDefinition,
  type MetadataValidator,
  type SchemaDefinition,
  schemaTemplates,
} from '@hallmark/schemas';
import type { SqlDatabase } from '@hallmark/sql';
import {
  deleteSchema,
  findSchema,
  insertSchema,
  listSchemas,
  type StoredSchema,
  schemaView,
  updateSchema,
} from '../store/schema-store.ts';

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

function definitionProblem(definition: SchemaDefinition): HallmarkError | undefined {
  const problems = checkDefinition(definition);
  if (problems.length === 0) return undefined;
  return new HallmarkError('VALIDATION_ERROR', `Invalid schema: check ${problems.map((problem) => problem.field).join(', ')}.`, {
    fields: problems.map((problem) => ({
      field: `fields.${problem.field}`.replace('fields.fields', 'fields'),
      in: 'body',
      message: problem.message,
    })),
  });
}

const notFound = (id: string) => new HallmarkError('NOT_FOUND', `There is no schema ${id}.`, { id });

/** Validators are compiled once per schema version and kept (a version never changes). */
export function createSchemaCatalog(deps: SchemaDeps) {
  const compiled = new Map<string, MetadataValidator>();
  // A version never changes, so it is kept; "the current version" is kept 5 s, and dropped here
  // at once on update or delete (another replica may answer the previous version for up to 5 s,
  // and says which version it used).
  const found = new Map<string, { schema: StoredSchema; until: number }>();
  const forget = (owner: Principal, id: string) => {
    for (const key of found.keys()) if (key.startsWith(`${owner.accountId}|${owner.environment}|${id}|`)) found.delete(key);
  };

  const record = async (owner: Principal, type: string, data: Record<string, unknown>) => {
    await deps.eventStore.append(accountStream(owner), [{ type, data }], { expectedVersion: 'any' });
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
    if (cached && cached.until > Date.now()) return { schema: cached.schema, template: false };
    const schema = await findSchema(deps.db, owner, id, version);
    if (!schema) throw notFound(version === undefined ? id : `${id} version ${version}`);
    if (found.size > 10_000) found.clear();
    found.set(key, { schema, until: Date.now() + (version === undefined ? 5_000 : 600_000) });
    return { schema, template: false };
  };

  const validatorOf = (schema: StoredSchema): MetadataValidator => {
    const key = `${schema.id}@${schema.version}`;
    let validator = compiled.get(key);
    if (!validator) {
      validator = compileMetadataSchema(schema);
      if (compiled.size > 10_000) compiled.clear();
      compiled.set(key, validator);
    }
    return validator;
  };

  return {
    async create(owner: Principal, body: CreateSchemaBody): Promise<SchemaView> {
      let definition: { name: string; vertical: string; fields: FieldDefinition[]; additionalProperties: boolean };
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
      const problem = definitionProblem(definition);
      if (problem) throw problem;
      const schema = await insertSchema(deps.db, owner, { id: `sch_${randomHex(10)}`, ...definition });
      await record(owner, 'schema.created', {
        schemaId: schema.id,
        version: 1,
        ...definition,
        ...(body.copyFrom ? { copiedFrom: body.copyFrom } : {}),
      });
      return schemaView(schema);
    },

    async list(owner: Principal, query: ListSchemasQuery): Promise<SchemaList> {
      const limit = query.limit ?? 20;
      if (query.templates) {
        const all = [...templates.values()].filter((template) => !query.vertical || template.vertical === query.vertical);
        return {
          schemas: all.map((template) => schemaView(template, true)),
          pagination: { limit, nextCursor: null, hasMore: false },
        };
      }
      const [afterUs, afterId] = query.cursor ? decodeCursor(query.cursor, [/^\d{1,20}$/, /^.{1,100}$/]) : [];
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
      let problem: HallmarkError | undefined;
      const updated = await updateSchema(deps.db, owner, id, (current) => {
        const next = {
          name: body.name ?? current.name,
          vertical: body.vertical ?? current.vertical,
          fields: (body.fields as FieldDefinition[] | undefined) ?? current.fields,
          additionalProperties: body.additionalProperties ?? current.additionalProperties,
        };
        problem = definitionProblem(next);
        if (problem) throw problem;
        return next;
      }).catch((error: unknown) => {
        throw problem ?? error;
      });
      if (!updated) throw notFound(id);
      forget(owner, id);
      await record(owner, 'schema.updated', {
        schemaId: id,
        version: updated.version,
        name: updated.name,
        vertical: updated.vertical,
        fields: updated.fields,
        additionalProperties: updated.additionalProperties,
      });
      return schemaView(updated);
    },

    async remove(owner: Principal, id: string): Promise<void> {
      if (templates.has(id)) throw new HallmarkError('CONFLICT', 'Templates are read-only.', { id });
      if (!(await deleteSchema(deps.db, owner, id))) throw notFound(id);
      forget(owner, id);
      await record(owner, 'schema.deleted', { schemaId: id });
    },

    async validate(owner: Principal, id: string, version: number | undefined, data: unknown): Promise<ValidationOutcome> {
      const { schema } = await read(owner, id, version);
      return { ...validatorOf(schema).validate(data), schemaId: schema.id, version: schema.version };
    },

    /** For generation: the outcome, or undefined when no schema is asked for. A missing schema is a VALIDATION_ERROR. */
    async validateForGeneration(owner: Principal, schemaId: string, version: number | undefined, metadata: unknown) {
      const found = await read(owner, schemaId, version).catch(() => undefined);
      if (!found) return { missing: true as const };
      return {
        missing: false as const,
        schemaId: found.schema.id,
        version: found.schema.version,
        ...validatorOf(found.schema).validate(metadata),
      };
    },
  };
}
export type SchemaCatalog = ReturnType<typeof createSchemaCatalog>;
