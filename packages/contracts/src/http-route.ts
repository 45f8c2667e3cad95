import type { TObject, TSchema } from '@sinclair/typebox';
import type { ErrorCode } from './error-codes.ts';
import type { Scope } from './scopes.ts';

export type HttpMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';

export interface ResponseDefinition {
  description: string;
  schema?: TSchema;
  /** Defaults to application/json. */
  contentType?: string;
}

/**
 * One HTTP operation. The gateway registers routes from these definitions and validates with
 * their schemas; the OpenAPI document is generated from the same list, so the two cannot drift.
 */
export interface RouteDefinition {
  operationId: string;
  method: HttpMethod;
  /** Full path with OpenAPI-style parameters, e.g. `/api/v1/keys/{id}/revoke`. */
  path: string;
  summary: string;
  tags: readonly string[];
  /**
   * `api-key`: a valid key holding `scope` is required. `public`: no key is read.
   * `optional-key`: public, but a key that is sent is checked and rate-limited like any other.
   * The console's session cookie counts as a key on `api-key` and `optional-key` routes.
   * `session`: the console's own session routes (`/sessions/current`): the handler reads the
   * session cookie itself; only the CSRF rule is applied before it.
   */
  auth: 'public' | 'api-key' | 'optional-key' | 'session';
  /** The last path parameter takes the rest of the path, slashes included (a resolver's `/01/…`). */
  catchAll?: boolean;
  /**
   * A public route limited per client address (HALLMARK_PUBLIC_RATE_LIMIT per second). On an
   * `optional-key` route only requests without a key are; one with a key spends its account's limits.
   */
  publicRateLimit?: boolean;
  /** The scope an `api-key` route requires. */
  scope?: Scope;
  /** Which daily quota the route spends, and whether a request counts once or once per item of `body.items`. */
  quota?: QuotaRule;
  params?: TObject;
  querystring?: TObject;
  body?: TSchema;
  /** Largest body accepted, in bytes, when this route takes more than the gateway's default. */
  bodyLimit?: number;
  /** A body that is not JSON (a multipart upload, a form): documented in OpenAPI, parsed by the handler. */
  formBody?: {
    contentType: 'multipart/form-data' | 'application/x-www-form-urlencoded' | 'image/png' | 'text/csv';
    /** Other media types the same body may be sent as (a logo: image/jpeg besides image/png). */
    alsoAs?: readonly string[];
    schema: TSchema;
  };
  /** A POST whose body may be left out entirely; it is then taken as `{}`. */
  bodyOptional?: boolean;
  /**
   * A POST that creates something: it honours an `Idempotency-Key` header (the gateway's
   * idempotency.ts replays the first 2xx answer to a retry of the same request).
   */
  idempotent?: boolean;
  responses: Readonly<Record<number, ResponseDefinition>>;
  /** Error codes this operation may answer with, besides the generic ones every route has. */
  errors: readonly ErrorCode[];
  /**
   * Examples for the OpenAPI document where the ones made from the schemas (schema-example.ts)
   * would not read well: the request body, and response bodies by status.
   */
  examples?: { body?: unknown; responses?: Readonly<Record<number, unknown>> };
}

export interface QuotaRule {
  kind: 'generate' | 'verify';
  per: 'request' | 'item';
}

export function defineRoute<const R extends RouteDefinition>(route: R): R {
  return route;
}

/** The path fastify registers for a route: `:name` parameters, and `*` for a catch-all last parameter. */
export function routerPathOf(route: Pick<RouteDefinition, 'path' | 'catchAll'>): string {
  return route.catchAll ? route.path.replace(/\{[A-Za-z0-9_]+\}$/, '*') : toRouterPath(route.path);
}

/** `/api/v1/keys/{id}` → `/api/v1/keys/:id`, the form fastify routes take. */
export function toRouterPath(path: string): string {
  return path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}
