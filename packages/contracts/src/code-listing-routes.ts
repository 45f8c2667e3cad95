import { defineRoute } from './http-route.ts';
import { AssetIdParam, CodeDetail, CodeList, ListCodesQuery } from './schemas/code-listing.ts';

// The caller's codes (docs/API.md, "Listing codes"): code-service's table, keyset-paged.

const code = {
  assetId: 'code_0193b4c2e8a47c3f9d2e1a0b5c6d7e8f',
  gtin: '09506000134352',
  serialNumber: 'SN-000123',
  batchNumber: 'LOT42',
  expiryDate: '2030-06-30',
  url: `https://id.example.com/01/09506000134352/21/SN-000123/10/LOT42?17=300630&sig=${'A'.repeat(86)}`,
  createdAt: '2026-01-15T09:30:00.000Z',
  metadata: { name: 'Eau de Parfum 50 ml' },
};

export const listCodesRoute = defineRoute({
  operationId: 'listCodes',
  method: 'GET',
  path: '/api/v1/codes',
  summary:
    'The caller’s codes (its account and environment), newest first, cursor-paged, filtered by GTIN, serial and batch (exact). Every page costs the same however deep.',
  tags: ['codes'],
  auth: 'api-key',
  scope: 'assets:read',
  querystring: ListCodesQuery,
  responses: { 200: { description: 'A page of codes', schema: CodeList } },
  errors: ['VALIDATION_ERROR', 'SERVICE_UNAVAILABLE'],
  examples: {
    responses: {
      200: { data: [code], nextCursor: null, pagination: { limit: 50, nextCursor: null, hasMore: false } },
    },
  },
});

export const getCodeRoute = defineRoute({
  operationId: 'getCode',
  method: 'GET',
  path: '/api/v1/codes/{assetId}',
  summary:
    'One of the caller’s codes with its scans (count, first and last, the flags raised), whether it was reported, and the block covering it. Another account’s code is NOT_FOUND.',
  tags: ['codes'],
  auth: 'api-key',
  scope: 'assets:read',
  params: AssetIdParam,
  responses: { 200: { description: 'The code', schema: CodeDetail } },
  errors: ['NOT_FOUND', 'SERVICE_UNAVAILABLE'],
  examples: {
    responses: {
      200: {
        ...code,
        scans: { count: 3, firstAt: '2026-01-16T10:00:00.000Z', lastAt: '2026-01-18T15:12:00.000Z', flags: ['EXCESSIVE_SCANS'] },
        reported: false,
        blocked: null,
      },
    },
  },
});

export const codeListingRoutes = [listCodesRoute, getCodeRoute] as const;
