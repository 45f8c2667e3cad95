import { writesRealDateTime } from '@hallmark/gs1';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { checkDefinition, type DefinitionProblem, type FieldDefinition, type SchemaDefinition } from './field-definition.ts';

export interface MetadataError {
  /** Dotted path to the value, e.g. `ingredients[2].name`. */
  field: string;
  message: string;
}

export interface MetadataValidation {
  isValid: boolean;
  /** At most maxMetadataErrors, in the data's order. */
  errors: MetadataError[];
  /** True when the data has errors beyond those listed. */
  errorsTruncated: boolean;
}

export interface MetadataValidator {
  validate(data: unknown): MetadataValidation;
}

/** The most errors a validation lists: enough to fix data by, never an answer larger than its question. */
export const maxMetadataErrors = 100;

/**
 * Every error of the data is collected only when it can have at most this many (counted from its
 * values and the schema's widest object, see errorBound). Past it only the first error is found:
 * 330,000 empty objects against five required fields were 1.65 million errors, 10 s on the event
 * loop and an 85 MB answer.
 */
const maxErrorsCollected = 10_000;

const isoDate = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/;

/**
 * An Ajv of the validator's own. Ajv keeps every schema it compiles, in its cache and in the values
 * its generated code refers to (`ajv.scope`, which nothing removes: `removeSchema` clears the cache
 * only), so one Ajv for the module grew by each compile (+160 MB after 2,000 compiles of 200 fields)
 * and dropping a validator freed nothing. Its own Ajv is freed with it. `validateSchema: false`: the
 * schema is ours (jsonSchemaOf), and checking it against the meta-schema would compile that anew for
 * each instance (10 ms); a new Ajv without it costs about 0.5 ms. `ownProperties`: data's inherited
 * properties (`constructor`, `toString`) are not read as its fields.
 */
function newAjv(allErrors: boolean): Ajv {
  const ajv = new Ajv({ allErrors, strict: false, validateSchema: false, ownProperties: true });
  ajv.addFormat('iso-date', {
    type: 'string',
    // Date.parse rolls a 30th of February over into March: the date must exist as written.
    validate: (value: string) => isoDate.test(value) && writesRealDateTime(value) && !Number.isNaN(Date.parse(value)),
  });
  return ajv;
}

function jsonSchemaOf(fields: readonly FieldDefinition[], additionalProperties: boolean): Record<string, unknown> {
  // No prototype: a name is never read as, or written to, an inherited property (`__proto__`).
  const properties: Record<string, unknown> = Object.create(null);
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
    case 'integer':
      // 9007199254740993 parses as ...992: a whole number past 2^53 would be stored as one the client never sent.
      return { type: 'integer', minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER };
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

/** A definition no validator can be made of (one checkDefinition refuses); `problems` say why. */
export class UnusableDefinitionError extends Error {
  override readonly name = 'UnusableDefinitionError';
  readonly problems: DefinitionProblem[];

  constructor(problems: DefinitionProblem[], options?: { cause?: unknown }) {
    super(`The schema definition cannot be used: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}.`, options);
    this.problems = problems;
  }
}

/**
 * Compiles a schema definition once; the validator is then reused for every check, and holds the
 * only reference to what was compiled (dropping it frees that). Throws UnusableDefinitionError for a
 * definition checkDefinition refuses (one stored before a check was added, e.g. a field named
 * `__proto__`), never checking data against a schema that means something else than it says.
 */
export function compileMetadataSchema(definition: SchemaDefinition): MetadataValidator {
  const problems = checkDefinition(definition, { storedBefore: true });
  if (problems.length > 0) throw new UnusableDefinitionError(problems);
  const schema = jsonSchemaOf(definition.fields, definition.additionalProperties ?? false);
  let firstError: ValidateFunction;
  try {
    firstError = newAjv(false).compile(schema);
  } catch (error) {
    throw new UnusableDefinitionError([{ field: 'fields', message: 'could not be compiled' }], { cause: error });
  }
  // Compiled when data first fails: valid data, the common case, never needs it.
  let everyError: ValidateFunction | undefined;
  // A value can fail its own type, or as an object miss each of its level's fields: at most this many errors a value.
  const errorsPerValue = widestObject(definition.fields) + 1;
  const maxValuesForEveryError = Math.floor(maxErrorsCollected / errorsPerValue);
  return {
    validate(data) {
      if (firstError(data)) return { isValid: true, errors: [] as MetadataError[], errorsTruncated: false };
      const everyOne = valuesUpTo(data, maxValuesForEveryError + 1) <= maxValuesForEveryError;
      everyError ??= everyOne ? newAjv(true).compile(schema) : undefined;
      const found = everyOne && everyError && !everyError(data) ? (everyError.errors ?? []) : (firstError.errors ?? []);
      return {
        isValid: false,
        errors: found.slice(0, maxMetadataErrors).map((error) => ({ field: pathOf(error), message: messageOf(error) })),
        errorsTruncated: !everyOne || found.length > maxMetadataErrors,
      };
    },
  };
}

/** The most fields one object of the definition names (the top level's, or a nested object's). */
function widestObject(fields: readonly FieldDefinition[]): number {
  let widest = fields.length;
  for (const field of fields) if (field.fields) widest = Math.max(widest, widestObject(field.fields));
  return widest;
}

/** How many values the data holds (itself, its members and elements, all the way down), counted up to `limit`. */
function valuesUpTo(data: unknown, limit: number): number {
  let count = 0;
  const pending: unknown[] = [data];
  while (pending.length > 0 && count < limit) {
    const value = pending.pop();
    count += 1;
    const members = Array.isArray(value) ? value : value !== null && typeof value === 'object' ? Object.values(value) : [];
    // Values past the limit are not kept: the count stops there anyway.
    for (let i = 0; i < members.length && count + pending.length < limit; i += 1) pending.push(members[i]);
  }
  return count + pending.length;
}
