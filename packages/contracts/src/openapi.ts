import type { TSchema } from '@sinclair/typebox';
import { type ErrorCode, errorStatus } from './error-codes.ts';
import type { RouteDefinition } from './http-route.ts';
import { ErrorEnvelope } from './schemas/common.ts';

/** Errors any route can answer with, whatever it does. */
const genericErrors: readonly ErrorCode[] = ['NOT_FOUND', 'INTERNAL_ERROR'];
const bodyErrors: readonly ErrorCode[] = ['VALIDATION_ERROR', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'];

export interface OpenApiInfo {
  title: string;
  version: string;
  description?: string;
}

type JsonObject = Record<string, unknown>;

/** Builds the OpenAPI 3.1 document from route definitions. Pure: same routes, same document. */
export function buildOpenApiDocument(routes: readonly RouteDefinition[], info: OpenApiInfo): JsonObject {
  const paths: Record<string, JsonObject> = {};
  for (const route of routes) {
    const entry = paths[route.path] ?? {};
    entry[route.method.toLowerCase()] = operationOf(route);
    paths[route.path] = entry;
  }
  return {
    openapi: '3.1.0',
    info,
    paths,
    components: {
      schemas: { ErrorEnvelope: plainSchema(ErrorEnvelope) },
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' } },
    },
  };
}

function operationOf(route: RouteDefinition): JsonObject {
  const operation: JsonObject = {
    operationId: route.operationId,
    summary: route.summary,
    tags: [...route.tags],
    security: route.auth === 'api-key' ? [{ apiKey: [] }] : route.auth === 'optional-key' ? [{}, { apiKey: [] }] : [],
    ...(route.scope ? { 'x-required-scope': route.scope } : {}),
    parameters: [
      ...parametersOf(route.params, 'path'),
      ...parametersOf(route.querystring, 'query'),
      ...(route.idempotent ? [idempotencyKeyParameter] : []),
    ],
    responses: responsesOf(route),
  };
  if (route.body) {
    operation.requestBody = {
      required: !route.bodyOptional,
      content: { 'application/json': { schema: plainSchema(route.body) } },
    };
  } else if (route.formBody) {
    operation.requestBody = {
      required: true,
      content: Object.fromEntries(
        [route.formBody.contentType, ...(route.formBody.alsoAs ?? [])].map((type) => [
          type,
          { schema: plainSchema(route.formBody?.schema as TSchema) },
        ]),
      ),
    };
  }
  return operation;
}

/** On every route that creates something (RouteDefinition.idempotent); docs/API.md, Idempotency-Key. */
const idempotencyKeyParameter: JsonObject = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retry safe: a retry with the same key and the same request within 24 h gets the first 2xx answer again ' +
    '(with Idempotent-Replayed: true) instead of running twice; the same key with another request is 422 ' +
    'IDEMPOTENCY_KEY_REUSED; while the first is still running, 409 CONFLICT with Retry-After. Keys are per account, ' +
    'environment and operation.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
};

function parametersOf(schema: TSchema | undefined, location: 'path' | 'query'): JsonObject[] {
  if (!schema) return [];
  const properties = (schema.properties ?? {}) as Record<string, TSchema>;
  const required = new Set<string>((schema.required as string[] | undefined) ?? []);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: location,
    required: location === 'path' || required.has(name),
    schema: plainSchema(property),
  }));
}

function responsesOf(route: RouteDefinition): JsonObject {
  const responses: JsonObject = {};
  for (const [status, response] of Object.entries(route.responses)) {
    responses[status] = response.schema
      ? {
          description: response.description,
          content: { [response.contentType ?? 'application/json']: { schema: plainSchema(response.schema) } },
        }
      : { description: response.description };
  }
  const errors = new Set<ErrorCode>([...route.errors, ...genericErrors, ...(route.body ? bodyErrors : [])]);
  if (route.auth !== 'public') {
    const authErrors = ['INVALID_API_KEY', 'EXPIRED_API_KEY', 'REVOKED_API_KEY', 'RATE_LIMITED'] as const;
    for (const code of authErrors) errors.add(code);
  }
  if (route.auth === 'api-key') errors.add('MISSING_API_KEY');
  if (route.scope) errors.add('INSUFFICIENT_SCOPE');
  if (route.idempotent) {
    errors.add('IDEMPOTENCY_KEY_REUSED');
    errors.add('CONFLICT');
    errors.add('VALIDATION_ERROR');
  }
  const codesByStatus = new Map<number, ErrorCode[]>();
  for (const code of errors) {
    const status = errorStatus[code];
    codesByStatus.set(status, [...(codesByStatus.get(status) ?? []), code]);
  }
  for (const [status, codes] of [...codesByStatus].sort(([a], [b]) => a - b)) {
    responses[String(status)] = {
      description: `Error: ${codes.join(', ')}`,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
    };
  }
  return responses;
}

/** TypeBox schemas carry symbol-keyed metadata; OpenAPI wants plain JSON Schema. */
function plainSchema(schema: TSchema): JsonObject {
  return JSON.parse(JSON.stringify(schema)) as JsonObject;
}
