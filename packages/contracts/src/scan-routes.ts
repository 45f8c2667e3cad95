import { Type } from '@sinclair/typebox';
import { defineRoute } from './http-route.ts';
import {
  BlockIdParam,
  BlockList,
  BlockView,
  BulkBlockResult,
  CreateBlockBody,
  ListBlocksQuery,
  ListScansQuery,
  RemoveBlocksQuery,
  RemovedBlocks,
  ScanAggregates,
  ScanAggregatesQuery,
  ScanCountries,
  ScanCountriesQuery,
  ScanList,
  TopCodes,
  TopCodesQuery,
} from './schemas/scans.ts';

const apiPrefix = '/api/v1';
const errors = ['VALIDATION_ERROR', 'SERVICE_UNAVAILABLE'] as const;

/** The scans of the caller's codes (docs/API.md, "Scans"): served by verify-service's read model. */
export const listScansRoute = defineRoute({
  operationId: 'listScans',
  method: 'GET',
  path: `${apiPrefix}/scans`,
  summary:
    'Scans of the caller’s codes (its account and environment), newest first, cursor-paged, filtered by time range, verdict, risk flag, GTIN, serial, batch, country and reported. ' +
    'With `Accept: text/csv` or `?format=csv` every matching scan is streamed as text/csv (header line; cells that start with = + - @ are prefixed with a quote) and `limit`/`cursor` are ignored.',
  tags: ['scans'],
  auth: 'api-key',
  scope: 'assets:read',
  querystring: ListScansQuery,
  responses: { 200: { description: 'A page of scans (or, as text/csv, all of them)', schema: ScanList } },
  errors: [...errors],
});

export const scanAggregatesRoute = defineRoute({
  operationId: 'getScanAggregates',
  method: 'GET',
  path: `${apiPrefix}/scans/aggregates`,
  summary:
    'Scan counts by verdict, risk flag or country per hour or day (UTC) over [from, to) (hours whole; by default the last 24 hours for hour buckets, the last 30 days for day buckets; at most 31 days of hours or 366 days).',
  tags: ['scans'],
  auth: 'api-key',
  scope: 'assets:read',
  querystring: ScanAggregatesQuery,
  responses: { 200: { description: 'Counts per bucket', schema: ScanAggregates } },
  errors: [...errors],
});

export const topScannedCodesRoute = defineRoute({
  operationId: 'getTopScannedCodes',
  method: 'GET',
  path: `${apiPrefix}/scans/top-codes`,
  summary:
    'The caller’s codes with the most suspicious and counterfeit scans over the UTC days from `from` to `to` (default the last 30 days; at most 366), most first.',
  tags: ['scans'],
  auth: 'api-key',
  scope: 'assets:read',
  querystring: TopCodesQuery,
  responses: { 200: { description: 'The top codes', schema: TopCodes } },
  errors: [...errors],
});

export const scanCountriesRoute = defineRoute({
  operationId: 'getScanCountries',
  method: 'GET',
  path: `${apiPrefix}/scans/countries`,
  summary:
    'Scans of the caller’s codes by country over [from, to) (default the last 30 days; at most 366), counting only scans whose client sent `location.country`.',
  tags: ['scans'],
  auth: 'api-key',
  scope: 'assets:read',
  querystring: ScanCountriesQuery,
  responses: { 200: { description: 'Scans per country', schema: ScanCountries } },
  errors: [...errors],
});

/** The blocklist (docs/API.md, "Blocklist"). */
export const createBlockRoute = defineRoute({
  operationId: 'createBlock',
  method: 'POST',
  idempotent: true,
  path: `${apiPrefix}/blocklist`,
  summary:
    'Block a code (`gtin`, `serial`) or a serial range of a GTIN (`serialFrom`..`serialTo`, same length, inclusive) of a GTIN the account owns, as `counterfeit` (verifications answer COUNTERFEIT) or `withdrawn` (SUSPICIOUS), both with KNOWN_COUNTERFEIT_PATTERN and the reason. Recorded as an audit event.',
  tags: ['scans'],
  auth: 'api-key',
  scope: 'assets:create',
  body: CreateBlockBody,
  responses: { 201: { description: 'The block', schema: BlockView } },
  errors: [...errors, 'INVALID_GTIN', 'GTIN_NOT_OWNED', 'CONFLICT'],
});

export const bulkBlockRoute = defineRoute({
  operationId: 'createBlocksFromCsv',
  method: 'POST',
  path: `${apiPrefix}/blocklist/bulk`,
  summary:
    'Block many codes from a CSV body (Content-Type text/csv; header `gtin,serial,serialFrom,serialTo,kind,reason`, up to 10,000 lines): each line is validated and blocked on its own, as POST /blocklist.',
  tags: ['scans'],
  auth: 'api-key',
  scope: 'assets:create',
  idempotent: true,
  bodyLimit: 2 * 1024 * 1024,
  formBody: { contentType: 'text/csv', schema: Type.String({ description: 'the CSV' }) },
  responses: { 200: { description: 'One result per line', schema: BulkBlockResult } },
  errors: [...errors, 'UNSUPPORTED_MEDIA_TYPE'],
});

export const listBlocksRoute = defineRoute({
  operationId: 'listBlocks',
  method: 'GET',
  path: `${apiPrefix}/blocklist`,
  summary: 'The account’s blocks, newest first, filtered by GTIN, status and the key that made them.',
  tags: ['scans'],
  auth: 'api-key',
  scope: 'assets:read',
  querystring: ListBlocksQuery,
  responses: { 200: { description: 'A page of blocks', schema: BlockList } },
  errors: [...errors],
});

export const deleteBlockRoute = defineRoute({
  operationId: 'deleteBlock',
  method: 'DELETE',
  path: `${apiPrefix}/blocklist/{blockId}`,
  summary: 'Unblock: the block is kept as removed and verifications no longer see it. Recorded as an audit event.',
  tags: ['scans'],
  auth: 'api-key',
  scope: 'assets:create',
  params: BlockIdParam,
  responses: { 200: { description: 'The block, removed', schema: BlockView } },
  errors: [...errors, 'NOT_FOUND'],
});

export const removeBlocksMadeByRoute = defineRoute({
  operationId: 'removeBlocksMadeBy',
  method: 'DELETE',
  path: `${apiPrefix}/blocklist`,
  summary:
    'Remove every active block one API key made (`createdBy`), each as DELETE /blocklist/{blockId} would: after a key leaks, what it blocked is undone in one request. Needs scope *; each removal recorded as an audit event.',
  tags: ['scans'],
  auth: 'api-key',
  scope: '*',
  querystring: RemoveBlocksQuery,
  responses: { 200: { description: 'How many blocks were removed', schema: RemovedBlocks } },
  errors: [...errors],
});

export const scanRoutes = [
  listScansRoute,
  scanAggregatesRoute,
  topScannedCodesRoute,
  scanCountriesRoute,
  createBlockRoute,
  bulkBlockRoute,
  listBlocksRoute,
  deleteBlockRoute,
  removeBlocksMadeByRoute,
] as const;
