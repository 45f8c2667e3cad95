import type { TSchema } from '@sinclair/typebox';
import { type ErrorCode, errorStatus } from './error-codes.ts';
import type { RouteDefinition } from './http-route.ts';
import { exampleOf } from './schema-example.ts';
import { ErrorEnvelope } from './schemas/common.ts';
import { webhookEventPayloads } from './schemas/webhooks.ts';

/** Errors any route can answer with, whatever it does. */
const genericErrors: readonly ErrorCode[] = ['NOT_FOUND', 'INTERNAL_ERROR'];
const bodyErrors: readonly ErrorCode[] = ['VALIDATION_ERROR', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'];

export interface OpenApiInfo {
  title: string;
  version: string;
  description?: string;
  license?: { name: string; identifier?: string; url?: string };
  contact?: { name?: string; url?: string; email?: string };
}

export interface OpenApiOptions {
  /** Where the API is reached; the first is the default a client library uses. */
  servers?: readonly { url: string; description?: string }[];
  /** OpenAPI 3.1 `webhooks`: the requests this API sends, by event type (docs/WEBHOOKS.md). */
  webhooks?: Readonly<Record<string, { summary: string; schema: TSchema }>>;
}

/** What every tag of the document groups; a route with a tag not here fails openapi.unit.test.ts. */
export const openApiTags: Readonly<Record<string, string>> = {
  system: 'Health, readiness, this document and the service round trip.',
  accounts: 'Tenant accounts: the caller’s own (`/accounts/me`) and, for the operator, provisioning and GTIN grants.',
  account: 'The caller’s account settings: resolver page branding.',
  keys: 'API keys, registered public keys, service signing keys and the public key set.',
  codes: 'Signed GS1 Digital Link codes: generate, verify, report, QR images, GTIN claims.',
  schemas: 'Metadata schemas a code’s metadata is validated against.',
  compliance: 'Hash chains, Merkle roots and proofs, and compliance exports.',
  auction: 'Auction objects: registration, photos, provenance and transfers.',
  links: 'GS1 Digital Link resolver links per GTIN.',
  scans: 'Scan analytics of the caller’s codes (list, CSV export, aggregates) and the blocklist.',
  webhooks: 'Standard Webhooks: endpoints, their messages and delivery attempts (docs/WEBHOOKS.md).',
  usage: 'What the caller’s account used today against its quotas, and each key’s requests.',
  sessions: 'The web console’s sign-in: a session cookie made from an API key, which the browser never keeps.',
  resolver: 'The public resolver: pages and linksets for scanned codes, scan reports, brand assets.',
};

/**
 * The document as a gateway serves it: info with licence and contact, and the gateway's public origin
 * (HALLMARK_PUBLIC_URL, else where it listens) as the server; the contact is its landing page at `/`.
 */
export function hallmarkOpenApiDocument(routes: readonly RouteDefinition[], origin: string): JsonObject {
  return buildOpenApiDocument(
    routes,
    {
      title: 'Hallmark API',
      version: '1.0.0',
      description:
        'Signed GS1 Digital Link codes, verification, provenance and compliance. Every error answers with the ' +
        '`ErrorEnvelope`; every answer carries `X-Request-Id`. The choices the API makes are in docs/API.md.',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Hallmark-Proprietary' },
      contact: { name: 'Hallmark API', url: `${origin}/` },
    },
    { servers: [{ url: origin, description: 'This gateway' }], webhooks: webhookEventPayloads },
  );
}

type JsonObject = Record<string, unknown>;

/** Builds the OpenAPI 3.1 document from route definitions. Pure: same routes, same document. */
export function buildOpenApiDocument(
  routes: readonly RouteDefinition[],
  info: OpenApiInfo,
  options: OpenApiOptions = {},
): JsonObject {
  const paths: Record<string, JsonObject> = {};
  const tags = new Set<string>();
  for (const route of routes) {
    const entry = paths[route.path] ?? {};
    entry[route.method.toLowerCase()] = operationOf(route);
    paths[route.path] = entry;
    for (const tag of route.tags) tags.add(tag);
  }
  return {
    openapi: '3.1.0',
    info,
    ...(options.servers ? { servers: options.servers.map((server) => ({ ...server })) } : {}),
    tags: [...tags].sort().map((name) => ({ name, description: openApiTags[name] ?? name })),
    paths,
    ...(options.webhooks ? { webhooks: webhooksOf(options.webhooks) } : {}),
    components: {
      schemas: { ErrorEnvelope: plainSchema(ErrorEnvelope) },
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
        consoleSession: {
          type: 'apiKey',
          in: 'cookie',
          name: 'hallmark_session',
          description:
            'The web console’s session (POST /api/v1/sessions). Requests other than GET, HEAD and OPTIONS made with it must ' +
            'also send `X-Hallmark-Console: 1`, and an `Origin` (when sent) of the gateway itself; else 403 CSRF_REJECTED.',
        },
      },
    },
  };
}

/**
 * Each event as the POST this API sends to an endpoint: the Standard Webhooks headers and the
 * message body's JSON Schema. Answering 2xx acknowledges it; anything else is retried.
 */
function webhooksOf(webhooks: NonNullable<OpenApiOptions['webhooks']>): JsonObject {
  const header = (description: string) => ({ required: true, description, schema: { type: 'string' } });
  return Object.fromEntries(
    Object.entries(webhooks).map(([type, { summary, schema }]) => [
      type,
      {
        post: {
          operationId: `webhook_${type.replace(/\W/g, '_')}`,
          summary,
          tags: ['webhooks'],
          // We send these: no API key; the receiver checks the webhook-signature header instead.
          security: [],
          parameters: [
            { name: 'webhook-id', in: 'header', ...header('The message id, the same on every attempt: the idempotency key') },
            { name: 'webhook-timestamp', in: 'header', ...header('Unix seconds when this attempt was signed') },
            {
              name: 'webhook-signature',
              in: 'header',
              ...header('Space-separated `v1,<base64 HMAC-SHA256>` (one per live secret) and `v1a,<base64 Ed25519>`'),
            },
          ],
          requestBody: {
            required: true,
            content: { 'application/json': { schema: plainSchema(schema), example: exampleOf(schema) } },
          },
          responses: { '200': { description: 'Any 2xx acknowledges the message; anything else is retried (docs/WEBHOOKS.md)' } },
        },
      },
    ]),
  );
}

/** An API key in x-api-key, or the console's session cookie in its place (docs/SECURITY.md, "Console sessions"). */
function securityOf(route: RouteDefinition): JsonObject[] {
  switch (route.auth) {
    case 'api-key':
      return [{ apiKey: [] }, { consoleSession: [] }];
    case 'optional-key':
      return [{}, { apiKey: [] }, { consoleSession: [] }];
    case 'session':
      return [{ consoleSession: [] }];
    default:
      return [];
  }
}

/** Methods a cookie-authenticated request may use without the console's CSRF header. */
const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS']);

function operationOf(route: RouteDefinition): JsonObject {
  const operation: JsonObject = {
    operationId: route.operationId,
    summary: route.summary,
    tags: [...route.tags],
    security: securityOf(route),
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
      content: {
        'application/json': { schema: plainSchema(route.body), example: route.examples?.body ?? exampleOf(route.body) },
      },
    };
  } else if (route.formBody) {
    operation.requestBody = {
      required: true,
      content: Object.fromEntries(
        [route.formBody.contentType, ...(route.formBody.alsoAs ?? [])].map((type) => [
          type,
          withExample(plainSchema(route.formBody?.schema as TSchema), route.examples?.body),
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
          content: {
            [response.contentType ?? 'application/json']: withExample(
              plainSchema(response.schema),
              route.examples?.responses?.[Number(status)],
            ),
          },
        }
      : { description: response.description };
  }
  const errors = new Set<ErrorCode>([...route.errors, ...genericErrors, ...(route.body ? bodyErrors : [])]);
  // A route that takes no body refuses one in a form encoding or as text (the gateway's route registry).
  if (!route.body && !route.formBody && route.method !== 'GET') errors.add('UNSUPPORTED_MEDIA_TYPE');
  if (route.auth !== 'public') {
    const authErrors = ['INVALID_API_KEY', 'EXPIRED_API_KEY', 'REVOKED_API_KEY', 'RATE_LIMITED'] as const;
    for (const code of authErrors) errors.add(code);
  }
  if (route.auth === 'api-key' || route.auth === 'session') errors.add('MISSING_API_KEY');
  if (route.auth !== 'public' && !safeMethods.has(route.method)) errors.add('CSRF_REJECTED');
  if (route.scope) errors.add('INSUFFICIENT_SCOPE');
  // A key restricted to some GTINs is refused what reaches past them (docs/API.md, "Resource restrictions").
  if (route.auth === 'api-key' || route.auth === 'optional-key') errors.add('KEY_RESTRICTED');
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
      content: {
        'application/json': {
          schema: { $ref: '#/components/schemas/ErrorEnvelope' },
          example: errorExample(codes[0] as ErrorCode),
        },
      },
    };
  }
  return responses;
}

/**
 * A media type with its schema and one example: the route's own, else one made from the schema.
 * Binary bodies (images, uploads' files) have none: no JSON value stands for their bytes.
 */
function withExample(schema: JsonObject, given: unknown): JsonObject {
  if (given !== undefined) return { schema, example: given };
  if (schema.contentEncoding === 'binary') return { schema };
  return { schema, example: exampleOf(schema) };
}

function errorExample(code: ErrorCode): JsonObject {
  return {
    error: {
      code,
      message: code === 'VALIDATION_ERROR' ? 'Invalid request: check name.' : `An example ${code} answer.`,
      ...(code === 'VALIDATION_ERROR' ? { details: { fields: [{ field: 'name', in: 'body', message: 'is required' }] } } : {}),
    },
    meta: { requestId: '0b6f4a52-3c1e-4d8a-9f27-5e1a2b3c4d5e', timestamp: '2026-01-15T09:30:00.000Z' },
  };
}

/** TypeBox schemas carry symbol-keyed metadata; OpenAPI wants plain JSON Schema. */
function plainSchema(schema: TSchema): JsonObject {
  return JSON.parse(JSON.stringify(schema)) as JsonObject;
}
