import { Type } from '@sinclair/typebox';
import { defineRoute } from './http-route.ts';
import {
  CreateLinkBody,
  LinkIdParam,
  LinkList,
  LinkView,
  ListLinksQuery,
  RemovedLinks,
  RemoveLinksQuery,
  UpdateLinkBody,
} from './schemas/links.ts';
import { HtmlPage, ResolverLinkParam, ResolverQuery } from './schemas/resolver.ts';

const apiPrefix = '/api/v1';
const linkErrors = ['VALIDATION_ERROR', 'SERVICE_UNAVAILABLE'] as const;

/** The brand's links per GTIN, lot or serial, served by the resolver (docs/RESOLVER.md, "Links"). */
export const createLinkRoute = defineRoute({
  operationId: 'createLink',
  method: 'POST',
  idempotent: true,
  path: `${apiPrefix}/links`,
  summary:
    'Add a link to an item of a GTIN the caller’s account owns (optionally only for a lot or a serial): a GS1 link type, an http(s) URL, title and media type; `default: true` makes it where a scan goes. Recorded as an audit event.',
  tags: ['links'],
  auth: 'api-key',
  scope: 'assets:create',
  body: CreateLinkBody,
  responses: { 201: { description: 'The link', schema: LinkView } },
  errors: [...linkErrors, 'INVALID_GTIN', 'GTIN_NOT_OWNED', 'CONFLICT'],
});

export const listLinksRoute = defineRoute({
  operationId: 'listLinks',
  method: 'GET',
  path: `${apiPrefix}/links`,
  summary: 'The account’s links, newest first; filtered by gtin, lot and serial.',
  tags: ['links'],
  auth: 'api-key',
  scope: 'assets:read',
  querystring: ListLinksQuery,
  responses: { 200: { description: 'A page of links', schema: LinkList } },
  errors: [...linkErrors],
});

export const updateLinkRoute = defineRoute({
  operationId: 'updateLink',
  method: 'PATCH',
  path: `${apiPrefix}/links/{id}`,
  summary: 'Change a link’s type, URL, title, media type, languages or whether it is the default. Recorded as an audit event.',
  tags: ['links'],
  auth: 'api-key',
  scope: 'assets:create',
  params: LinkIdParam,
  body: UpdateLinkBody,
  responses: { 200: { description: 'The link now', schema: LinkView } },
  errors: [...linkErrors, 'NOT_FOUND', 'GTIN_NOT_OWNED', 'CONFLICT'],
});

export const deleteLinkRoute = defineRoute({
  operationId: 'deleteLink',
  method: 'DELETE',
  path: `${apiPrefix}/links/{id}`,
  summary: 'Remove a link; the resolver stops serving it at once. Recorded as an audit event.',
  tags: ['links'],
  auth: 'api-key',
  scope: 'assets:create',
  params: LinkIdParam,
  responses: { 204: { description: 'Deleted' } },
  errors: [...linkErrors, 'NOT_FOUND'],
});

export const removeLinksMadeByRoute = defineRoute({
  operationId: 'removeLinksMadeBy',
  method: 'DELETE',
  path: `${apiPrefix}/links`,
  summary:
    'Remove every link one API key made (`createdBy`), each as DELETE /links/{id} would: after a key leaks, the links it added are undone in one request. Needs scope *; each removal recorded as an audit event.',
  tags: ['links'],
  auth: 'api-key',
  scope: '*',
  querystring: RemoveLinksQuery,
  responses: { 200: { description: 'How many links were removed', schema: RemovedLinks } },
  errors: [...linkErrors],
});

/** The verification page a scan's default link leads to (docs/RESOLVER.md). */
export const verificationPageRoute = defineRoute({
  operationId: 'verificationPage',
  method: 'GET',
  path: '/verify/01/{linkPath}',
  catchAll: true,
  params: ResolverLinkParam,
  summary:
    'The page a shopper lands on after scanning a code (the gs1:verificationService link, and the default one unless the brand set another): the verdict, product, scan count and time. With Accept: application/json the verification result. A GET is a scan (a reload within seconds counts once); HEAD is not, nor is a load by another page (an image, a frame, a script, a fetch) or a prefetch, which is refused.',
  tags: ['resolver'],
  auth: 'public',
  publicRateLimit: true,
  querystring: ResolverQuery,
  responses: {
    200: {
      description: 'The verification page (HTML), or JSON by content negotiation',
      schema: HtmlPage,
      contentType: 'text/html',
    },
    400: { description: 'A readable page saying what is wrong with the link', schema: HtmlPage, contentType: 'text/html' },
    403: {
      description:
        'Loaded by another page (Sec-Fetch-Dest other than document: an image, a frame, a script, a fetch) or prefetched (Sec-Purpose): not a scan. A page, or EMBEDDED_LOAD_REFUSED as JSON.',
      schema: HtmlPage,
      contentType: 'text/html',
    },
  },
  errors: ['RATE_LIMITED', 'SERVICE_UNAVAILABLE', 'EMBEDDED_LOAD_REFUSED'],
});

export const verificationPageOptionsRoute = defineRoute({
  operationId: 'verificationPageOptions',
  method: 'OPTIONS',
  path: '/verify/01/{linkPath}',
  catchAll: true,
  params: ResolverLinkParam,
  summary: 'CORS preflight for the verification page: GET, HEAD and OPTIONS from any origin.',
  tags: ['resolver'],
  auth: 'public',
  responses: { 204: { description: 'Allowed methods and headers' } },
  errors: [],
});

/** A compressed GS1 Digital Link URI (`https://host/<base64>`): answered as its uncompressed form. */
export const resolveCompressedRoute = defineRoute({
  operationId: 'resolveCompressedLink',
  method: 'GET',
  path: '/{compressed}',
  params: Type.Object({ compressed: Type.String({ maxLength: 2048, description: 'the compressed Digital Link' }) }),
  summary:
    'A compressed GS1 Digital Link: decompressed and answered exactly as its uncompressed URI (redirect, linkset, JSON), with `Link: <uncompressed>; rel="owl:sameAs"`. A path that is not a compressed link is 404; one that does not decompress is 400.',
  tags: ['resolver'],
  auth: 'public',
  publicRateLimit: true,
  querystring: ResolverQuery,
  responses: {
    307: { description: 'To the default link, or to the link of the requested linkType' },
    400: { description: 'A readable page saying what is wrong with the link', schema: HtmlPage, contentType: 'text/html' },
  },
  errors: ['NOT_FOUND', 'RATE_LIMITED', 'SERVICE_UNAVAILABLE'],
});

export const resolveCompressedOptionsRoute = defineRoute({
  operationId: 'resolveCompressedLinkOptions',
  method: 'OPTIONS',
  path: '/{compressed}',
  params: Type.Object({ compressed: Type.String({ maxLength: 2048 }) }),
  summary: 'CORS preflight for compressed links: GET, HEAD and OPTIONS from any origin.',
  tags: ['resolver'],
  auth: 'public',
  responses: { 204: { description: 'Allowed methods and headers' } },
  errors: [],
});

export const linkRoutes = [
  createLinkRoute,
  listLinksRoute,
  updateLinkRoute,
  deleteLinkRoute,
  removeLinksMadeByRoute,
  verificationPageRoute,
  verificationPageOptionsRoute,
  resolveCompressedRoute,
  resolveCompressedOptionsRoute,
] as const;
