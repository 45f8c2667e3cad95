import { defineRoute } from './http-route.ts';
import { KeyUsageList, ListKeyUsageQuery, UsageView } from './schemas/usage.ts';

// What an account has used today, and each key's requests (docs/API.md, "Usage").

export const getUsageRoute = defineRoute({
  operationId: 'getUsage',
  method: 'GET',
  path: '/api/v1/usage',
  summary:
    'The caller’s account in its environment today (UTC): codes generated, verifications and requests against the tier’s daily quotas, and the per-second rate limit.',
  tags: ['usage'],
  auth: 'api-key',
  responses: { 200: { description: 'Today’s usage', schema: UsageView } },
  errors: [],
  examples: {
    responses: {
      200: {
        accountId: 'acc_1a2b3c4d5e6f7a8b9c0d',
        environment: 'live',
        tier: 'starter',
        day: '2026-01-15',
        resetsAt: '2026-01-16T00:00:00.000Z',
        quotas: [
          { name: 'generate', used: 120, limit: 1000 },
          { name: 'verify', used: 3400, limit: 10000 },
          { name: 'requests', used: 3600, limit: null },
        ],
        rateLimit: { limit: 200, windowSeconds: 1 },
      },
    },
  },
});

export const listKeyUsageRoute = defineRoute({
  operationId: 'listKeyUsage',
  method: 'GET',
  path: '/api/v1/usage/keys',
  summary:
    'Each API key of the caller’s account and environment (newest first, cursor-paged) with its requests today and in the current minute, and when it was last used.',
  tags: ['usage'],
  auth: 'api-key',
  scope: 'keys:read',
  querystring: ListKeyUsageQuery,
  responses: { 200: { description: 'A page of keys with their requests', schema: KeyUsageList } },
  errors: ['VALIDATION_ERROR'],
  examples: {
    responses: {
      200: {
        data: [
          {
            keyId: 'key_8a7b6c5d4e3f2a1b0c9d',
            name: 'production server',
            requestsToday: 3480,
            requestsThisMinute: 12,
            lastUsedAt: '2026-01-15T09:29:58.000Z',
          },
        ],
        nextCursor: null,
        pagination: { limit: 20, nextCursor: null, hasMore: false },
      },
    },
  },
});

export const usageRoutes = [getUsageRoute, listKeyUsageRoute] as const;
