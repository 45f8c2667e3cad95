import { type Static, Type } from '@sinclair/typebox';
import { Pagination } from './common.ts';

/**
 * A field of a metadata schema. Nested `fields` are checked by the service, which names each bad one
 * by its path (`fields.box.fields[0]`): an entry that is not an object, or a name of Object.prototype
 * (`__proto__`, `constructor`, `toString`, …), is a VALIDATION_ERROR there.
 */
export const SchemaField = Type.Object(
  {
    name: Type.String({ maxLength: 64 }),
    type: Type.String({ description: 'string, number, integer, boolean, date, array or object' }),
    required: Type.Optional(Type.Boolean()),
    items: Type.Optional(Type.String({ description: 'arrays only: the element type' })),
    fields: Type.Optional(
      Type.Array(Type.Unknown(), {
        maxItems: 200,
        description: 'objects (and arrays of objects): their fields',
      }),
    ),
    description: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Vertical = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[a-z0-9][a-z0-9-]*$',
  description: 'e.g. pharmaceuticals, luxury, wine-spirits',
});

/** POST /schemas: a definition, or `copyFrom` a template (name and vertical then optional). */
export const CreateSchemaBody = Type.Object(
  {
    name: Type.Optional(Name),
    vertical: Type.Optional(Vertical),
    fields: Type.Optional(Type.Array(SchemaField, { maxItems: 200 })),
    additionalProperties: Type.Optional(
      Type.Boolean({ description: 'accept fields the schema does not name (default false: reported)' }),
    ),
    copyFrom: Type.Optional(Type.String({ description: 'the id of a template (GET /schemas?templates=true) to copy' })),
  },
  { additionalProperties: false },
);
export type CreateSchemaBody = Static<typeof CreateSchemaBody>;

export const UpdateSchemaBody = Type.Object(
  {
    name: Type.Optional(Name),
    vertical: Type.Optional(Vertical),
    fields: Type.Optional(Type.Array(SchemaField, { maxItems: 200 })),
    additionalProperties: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateSchemaBody = Static<typeof UpdateSchemaBody>;

export const SchemaView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  vertical: Type.String(),
  version: Type.Integer(),
  fields: Type.Array(Type.Unknown()),
  additionalProperties: Type.Boolean(),
  template: Type.Boolean({ description: 'a read-only starter schema, to copy' }),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});
export type SchemaView = Static<typeof SchemaView>;

export const SchemaList = Type.Object({ schemas: Type.Array(SchemaView), pagination: Pagination });
export type SchemaList = Static<typeof SchemaList>;

export const ListSchemasQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
    vertical: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    templates: Type.Optional(Type.Boolean({ description: 'list the read-only templates instead' })),
  },
  { additionalProperties: false },
);
export type ListSchemasQuery = Static<typeof ListSchemasQuery>;

export const SchemaIdParam = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });
export const SchemaVersionQuery = Type.Object(
  {
    // At most a PostgreSQL integer, the column's type: a larger number failed there as a 500 (22003).
    version: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'an earlier version; the current one by default' }),
    ),
  },
  { additionalProperties: false },
);

export const ValidateMetadataBody = Type.Record(Type.String(), Type.Unknown(), { description: 'the data object to check' });

export const ValidationOutcome = Type.Object({
  isValid: Type.Boolean(),
  errors: Type.Array(Type.Object({ field: Type.String(), message: Type.String() }), {
    maxItems: 100,
    description: 'the first 100 errors at most, in the data’s order',
  }),
  errorsTruncated: Type.Boolean({
    description: 'true when the data has more errors than `errors` lists (past 100, or too many to collect: then only the first)',
  }),
  schemaId: Type.String(),
  version: Type.Integer(),
});
export type ValidationOutcome = Static<typeof ValidationOutcome>;
