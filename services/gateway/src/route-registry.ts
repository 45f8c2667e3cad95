import { HallmarkError, type RouteDefinition, routerPathOf } from '@hallmark/contracts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export type RouteHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

const jsonContentType = /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i;
/**
 * A charset parameter other than UTF-8 (JSON between systems is UTF-8, RFC 8259; the body is read as
 * such). Every one is read: `charset=utf-8; charset=iso-8859-1` is refused, as a filter in front that
 * takes the last would read another text.
 */
const otherCharset = (contentType: string) =>
  [...contentType.matchAll(/;\s*charset\s*=\s*"?([^";\s]*)"?/gi)].some(
    ([, charset]) => charset?.toLowerCase() !== 'utf-8' && charset?.toLowerCase() !== 'utf8',
  );
/** The types an HTML form can send (and so a cross-site page, without a CORS preflight). */
const formLikeContentType = /^\s*(application\/x-www-form-urlencoded|multipart\/form-data|text\/plain)\s*(;|$)/i;
/**
 * The query string of an API route that takes none: any parameter is refused (400, "is not an
 * accepted field"), as on the routes that take some. Ignored, `merkle/root?treeSize=2` answered the
 * current root as if it were the one asked for (docs/API.md, "Query parameters"). Public pages,
 * probes and CORS preflights take any (a QR code's link may carry a campaign's parameters).
 */
const noQueryParameters = { type: 'object', properties: {}, additionalProperties: false } as const;
const querystringOf = (definition: RouteDefinition) =>
  definition.querystring ?? (definition.auth === 'api-key' || definition.auth === 'session' ? noQueryParameters : undefined);

/**
 * Registers a route from its contract definition: path, schemas and response shapes all come from
 * there, so what is served is what the OpenAPI document says.
 */
export function registerRoute(app: FastifyInstance, definition: RouteDefinition, handler: RouteHandler): void {
  const responses: Record<number, unknown> = {};
  for (const [status, response] of Object.entries(definition.responses)) {
    // fast-json-stringify picks a branch of a union by validating against each, on every response
    // (every item of a batch): a union is left to JSON.stringify. It stays in the OpenAPI document.
    const hasUnion = response.schema !== undefined && JSON.stringify(response.schema).includes('"anyOf"');
    if (response.schema && !hasUnion && (response.contentType ?? 'application/json') === 'application/json') {
      responses[Number(status)] = response.schema;
    }
  }
  const querystring = querystringOf(definition);
  app.route({
    method: definition.method,
    config: { route: definition },
    ...(definition.bodyLimit ? { bodyLimit: definition.bodyLimit } : {}),
    url: routerPathOf(definition),
    schema: {
      // A catch-all's rest of path arrives as fastify's `*`; its named parameter is for the OpenAPI document.
      ...(definition.params && !definition.catchAll ? { params: definition.params } : {}),
      ...(querystring ? { querystring } : {}),
      ...(definition.body ? { body: definition.body } : {}),
      response: responses,
    },
    ...(definition.body
      ? {
          preValidation: async (request: FastifyRequest) => {
            const contentType = request.headers['content-type'];
            if (contentType !== undefined && !jsonContentType.test(contentType)) {
              throw new HallmarkError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json.');
            }
            // A body declared UTF-16 or Latin-1 was read as UTF-8 all the same, its text changed unseen.
            if (contentType !== undefined && otherCharset(contentType)) {
              throw new HallmarkError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json in UTF-8.');
            }
            if (request.body === undefined && definition.bodyOptional) request.body = {};
          },
        }
      : !definition.formBody && definition.method !== 'GET'
        ? {
            // A route that takes no body (a revocation, a rotation) takes none in a form encoding or
            // as text either: what a cross-site form can send is refused, as on the routes with one.
            preValidation: async (request: FastifyRequest) => {
              const contentType = request.headers['content-type'];
              if (contentType !== undefined && formLikeContentType.test(contentType)) {
                throw new HallmarkError('UNSUPPORTED_MEDIA_TYPE', 'This operation takes no body; send none, or JSON.');
              }
            },
          }
        : {}),
    handler,
  });
}
