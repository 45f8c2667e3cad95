import { listKeys, testKeyRequestsPerDay, tierLimits } from '@hallmark/accounts';
import { type ApiKeyView, getUsageRoute, type ListKeyUsageQuery, listKeyUsageRoute, type UsageView } from '@hallmark/contracts';
import type { SqlExecutor } from '@hallmark/sql';
import type { FastifyInstance } from 'fastify';
import type { RateLimiter } from '../auth/rate-limiter.ts';
import { principalOf, requireApiKey } from '../auth/request-auth.ts';
import { registerRoute } from '../route-registry.ts';

export interface UsageRouteDeps {
  db: SqlExecutor;
  rateLimiter: RateLimiter;
  clock: () => Date;
}

/**
 * GET /usage, GET /usage/keys: read from the counters the limits spend (auth/rate-limiter.ts), so
 * the numbers are the ones that refuse requests, shared by every replica (Redis) and written to no
 * database per request.
 */
export function registerUsageRoutes(app: FastifyInstance, deps: UsageRouteDeps): void {
  registerRoute(app, getUsageRoute, async (request): Promise<UsageView> => {
    const key = requireApiKey(request);
    const owner = principalOf(request);
    const usage = await deps.rateLimiter.readDailyUsage(owner);
    const limits = tierLimits[key.tier];
    return {
      accountId: owner.accountId,
      environment: owner.environment,
      tier: key.tier,
      day: usage.day,
      resetsAt: new Date(usage.resetsAtMs).toISOString(),
      quotas: [
        { name: 'generate', used: usage.generate, limit: limits.generatePerDay },
        { name: 'verify', used: usage.verify, limit: limits.verifyPerDay },
        { name: 'requests', used: usage.requests, limit: owner.environment === 'test' ? testKeyRequestsPerDay : null },
      ],
      rateLimit: { limit: limits.requestsPerSecond, windowSeconds: 1 },
    };
  });

  registerRoute(app, listKeyUsageRoute, async (request) => {
    const owner = principalOf(request);
    const query = request.query as ListKeyUsageQuery;
    const limit = query.limit ?? 20;
    const page = await listKeys(
      deps.db,
      owner,
      { limit, type: 'api', ...(query.cursor ? { cursor: query.cursor } : {}) },
      deps.clock(),
    );
    const keys = page.keys as ApiKeyView[];
    const requests = await deps.rateLimiter.readKeyRequests(
      owner,
      keys.map((key) => key.id),
    );
    return {
      data: keys.map((key) => ({
        keyId: key.id,
        name: key.name,
        requestsToday: requests.get(key.id)?.today ?? 0,
        requestsThisMinute: requests.get(key.id)?.thisMinute ?? 0,
        lastUsedAt: key.lastUsedAt,
      })),
      nextCursor: page.pagination.nextCursor,
      pagination: page.pagination,
    };
  });
}
