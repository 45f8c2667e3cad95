import { type ErrorEnvelope, HallmarkError, toHallmarkError } from '@hallmark/contracts';
import type { FastifyError } from 'fastify';

export function errorEnvelope(error: HallmarkError, requestId: string): ErrorEnvelope {
  return { error: error.toData(), meta: { requestId, timestamp: new Date().toISOString() } };
}

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
  /** With ajv's `verbose`: the schema that refused the value (for its description). */
  parentSchema?: { description?: unknown };
}

export interface FieldProblem {
  /** Where the value is, from the top of its part: `items.0.gtin`; the part itself when it is the value. */
  field: string;
  /** body, querystring, params or headers. */
  in: string;
  /** For a person: "is required", "must be one of: test, live". */
  message: string;
}

/** Errors that only say "a branch failed": the branches' own errors say what. */
const wrapperKeywords = new Set(['anyOf', 'oneOf', 'if', 'not', 'allOf']);

const formatNames: Record<string, string> = {
  'date-time': 'an ISO 8601 date-time, e.g. 2026-01-15T09:30:00Z',
  date: 'a date as YYYY-MM-DD',
  uri: 'an absolute URL',
  url: 'an absolute URL',
  email: 'an email address',
  uuid: 'a UUID',
};

const typeNames: Record<string, string> = {
  string: 'a string',
  integer: 'a whole number',
  number: 'a number',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

const plural = (count: number, one: string) => `${count} ${one}${count === 1 ? '' : 's'}`;

/** One keyword's refusal, said for a person. */
function messageOf(error: AjvError): string {
  const p = error.params;
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not an accepted field';
    case 'type':
      return `must be ${String(p.type)
        .split(',')
        .map((type) => typeNames[type] ?? type)
        .join(' or ')}`;
    case 'minLength':
      return Number(p.limit) === 1 ? 'must not be empty' : `must be at least ${plural(Number(p.limit), 'character')} long`;
    case 'maxLength':
      return `must be at most ${plural(Number(p.limit), 'character')} long`;
    case 'minimum':
      return `must be at least ${String(p.limit)}`;
    case 'maximum':
      return `must be at most ${String(p.limit)}`;
    case 'exclusiveMinimum':
      return `must be greater than ${String(p.limit)}`;
    case 'exclusiveMaximum':
      return `must be less than ${String(p.limit)}`;
    case 'multipleOf':
      return `must be a multiple of ${String(p.multipleOf)}`;
    case 'minItems':
      return `must have at least ${plural(Number(p.limit), 'item')}`;
    case 'maxItems':
      return `must have at most ${plural(Number(p.limit), 'item')}`;
    case 'uniqueItems':
      return `must not repeat an item (items ${String(p.j)} and ${String(p.i)} are the same)`;
    case 'minProperties':
      return `must have at least ${plural(Number(p.limit), 'field')}`;
    case 'maxProperties':
      return `must have at most ${plural(Number(p.limit), 'field')}`;
    case 'format':
      return `must be ${formatNames[String(p.format)] ?? `in the ${String(p.format)} format`}`;
    case 'pattern': {
      const description = error.parentSchema?.description;
      return `must match the pattern ${String(p.pattern)}${typeof description === 'string' ? ` (${description})` : ''}`;
    }
    case 'propertyNames':
      return 'has a field name that is not accepted';
    default:
      return error.message ?? 'is invalid';
  }
}

/**
 * One entry per bad field, written for people: where it is and what is wrong, the allowed values of
 * an enum (or a union of literals) listed once, instead of one raw validator line per schema branch.
 */
export function fieldsOf(errors: readonly AjvError[], location: string | undefined): FieldProblem[] {
  const where = location ?? 'body';
  const byField = new Map<string, AjvError[]>();
  // "must match a schema in anyOf" and the like only say a branch failed; the branches' own errors,
  // wherever they are, say what. Kept only when they are all there is.
  const explained = errors.some((error) => !wrapperKeywords.has(error.keyword));
  for (const error of errors) {
    if (explained && wrapperKeywords.has(error.keyword)) continue;
    const path = error.instancePath.replace(/^\//, '').replaceAll('/', '.').replaceAll('~1', '/').replaceAll('~0', '~');
    const child = (error.params.missingProperty ?? error.params.additionalProperty) as string | undefined;
    const field = [path, child].filter(Boolean).join('.') || where;
    byField.set(field, [...(byField.get(field) ?? []), error]);
  }
  const problems: FieldProblem[] = [];
  for (const [field, all] of byField) {
    const fieldErrors = all;
    // A union of literals fails once per literal: say the allowed values, once.
    const allowed = fieldErrors.flatMap((error) =>
      error.keyword === 'const'
        ? [error.params.allowedValue]
        : error.keyword === 'enum'
          ? (error.params.allowedValues as unknown[])
          : [],
    );
    let message: string;
    if (allowed.length > 0) {
      const values = [...new Set(allowed.map((value) => (typeof value === 'string' ? value : JSON.stringify(value))))];
      message = values.length === 1 ? `must be ${values[0]}` : `must be one of: ${values.join(', ')}`;
    } else if (fieldErrors.every((error) => error.keyword === 'type')) {
      // A union of types (a nullable field) fails once per branch: one "must be a string or null".
      const types = [...new Set(fieldErrors.flatMap((error) => String(error.params.type).split(',')))];
      message = `must be ${types.map((type) => typeNames[type] ?? type).join(' or ')}`;
    } else {
      // Branches that wanted different things: each of them, once.
      message = [...new Set(fieldErrors.map(messageOf))].join(', or ');
    }
    problems.push({ field, in: where, message });
  }
  return problems;
}

/** The envelope's message for a refused request: the fields and what is wrong with each. */
function validationMessage(fields: readonly FieldProblem[]): string {
  if (fields.length === 1) return `Invalid request: ${fields[0]?.field} ${fields[0]?.message}.`;
  return `Invalid request: ${fields.length} fields: ${fields.map((field) => `${field.field} ${field.message}`).join('; ')}.`;
}

/** Maps what fastify and its plugins throw to the API's codes. Everything unknown is INTERNAL_ERROR. */
export function toApiError(error: unknown): HallmarkError {
  if (error instanceof HallmarkError) return error;
  const fastifyError = error as Partial<FastifyError> & { validation?: AjvError[]; validationContext?: string };
  if (fastifyError.validation) {
    const fields = fieldsOf(fastifyError.validation, fastifyError.validationContext);
    return new HallmarkError('VALIDATION_ERROR', validationMessage(fields), { fields });
  }
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new HallmarkError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
      return new HallmarkError('PAYLOAD_TOO_LARGE', 'The request body is larger than this endpoint accepts.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new HallmarkError('VALIDATION_ERROR', 'The body is empty; send a JSON object or no Content-Type.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      // fastify's parser (secure-json-parse) also refuses these keys in valid JSON, and does not say which it was.
      return new HallmarkError(
        'VALIDATION_ERROR',
        'The body is not valid JSON, or it has a "__proto__" key or a "constructor" key holding "prototype" (refused).',
      );
  }
  if (error instanceof SyntaxError && fastifyError.statusCode === 400) {
    return new HallmarkError('VALIDATION_ERROR', 'The body is not valid JSON.');
  }
  const status = fastifyError.statusCode;
  if (status === 413) return new HallmarkError('PAYLOAD_TOO_LARGE', 'The request body is too large.');
  if (status === 415) return new HallmarkError('UNSUPPORTED_MEDIA_TYPE', 'This content type is not accepted here.');
  if (status !== undefined && status >= 400 && status < 500) {
    return new HallmarkError('VALIDATION_ERROR', fastifyError.message ?? 'The request is not valid.');
  }
  return toHallmarkError(error);
}
