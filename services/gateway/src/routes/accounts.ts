import { provisionAccount } from '@hallmark/accounts';
import { type CreateAccountBody, createAccountRoute } from '@hallmark/contracts';
import type { SqlDatabase } from '@hallmark/sql';
import type { FastifyInstance } from 'fastify';
import { registerRoute } from '../route-registry.ts';

/** POST /accounts: the operator provisions a tenant and receives its first key, once. */
export function registerAccountRoutes(app: FastifyInstance, deps: { db: SqlDatabase; clock: () => Date }): void {
  registerRoute(app, createAccountRoute, async (request, reply) => {
    const body = request.body as CreateAccountBody;
    reply.status(201);
    return provisionAccount(deps.db, { name: body.name, tier: body.tier, environment: body.environment ?? 'live' }, deps.clock());
  });
}
