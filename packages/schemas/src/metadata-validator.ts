import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FieldDefinition, SchemaDefinition } from './field-definition.ts';

export interface MetadataError {
  /** Dotted path to the value, e.g. `ingredients[2].name`. */
  field: string;
  message: string;
}

export interface MetadataValidator {
  validate(data: unknown): { isValid: boolean; errors: MetadataError[] };
}

const isoDate = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/;

const ajv = new Ajv({ allErrors: true, strict: false });
ajv.addFormat('iso-date', {
  type: 'string',
  validate: (value: string) => isoDate.test(value) && !Number.isNaN(Date.parse(value)),
});

function jsonSchemaOf(fields: readonly FieldDefinition[], additionalProperties: boolean): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const field of fields) properties[field.name] = typeSchema(field, additionalProperties);
  return {
    type: 'object',
    properties,
    required: fields.filter((field) => field.required).map((field) => field.name),
    additionalProperties,
  };
}

function typeSchema(
  field: Pick<FieldDefinition, 'type' | 'items' | 'fields'>,
  additionalProperties: boolean,
): Record<string, unknown> {
  switch (field.type) {
    case 'date':
      return { type: 'string', format: 'iso-date' };
    case 'array':
      return { type: 'array', items: typeSchema({ type: field.items ?? 'string', fields: field.fields }, additionalProperties) };
    case 'object':
      return jsonSchemaOf(field.fields ?? [], additionalProperties);
    default:
      return { type: field.type };
  }
}

function pathOf(error: ErrorObject): string {
  const segments = error.instancePath
    .split('/')
    .slice(1)
    .map((segment) => (/^\d+$/.test(segment) ? `[${segment}]` : `.${segment}`));
  const child =
    (error.params as { missingProperty?: string; additionalProperty?: string }).missingProperty ??
    (error.params as { additionalProperty?: string }).additionalProperty;
  if (child) segments.push(`.${child}`);
  return segments.join('').replace(/^\./, '') || '(data)';
}

function messageOf(error: ErrorObject): string {
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not in the schema';
    case 'format':
      return 'must be an ISO 8601 date (YYYY-MM-DD) or date-time';
    case 'type':
      return `must be ${error.params.type === 'integer' ? 'a whole number' : `a ${error.params.type}`}`;
    default:
      return error.message ?? 'is invalid';
  }
}

/** Compiles a schema definition once; the validator is then reused for every check. */
export function compileMetadataSchema(definition: SchemaDefinition): MetadataValidator {
  const check: ValidateFunction = ajv.compile(jsonSchemaOf(definition.fields, definition.additionalProperties ?? false));
  return {
    validate(data) {
      if (check(data)) return { isValid: true, errors: [] };
      return {
        isValid: false,
        errors: (check.errors ?? []).map((error) => ({ field: pathOf(error), message: messageOf(error) })),
      };
    },
  };
}
