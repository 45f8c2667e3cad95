import { provisionAccount } from '@hallmark/accounts';
import { type CreateAccountBody, createAccountRoute } from '@hallmark/contracts';
import type { EventStore } from '@hallmark/event-store';
import type { SqlDatabase } from '@hallmark/sql';
import type { FastifyInstance } from 'fastify';
import { registerRoute } from '../route-registry.ts';

/**
 * POST /accounts: the operator provisions a tenant and receives its first key, once; both are
 * events in the new account's stream (`account.created`, `key.issued`).
 */
export function registerAccountRoutes(
  app: FastifyInstance,
  deps: { db: SqlDatabase; eventStore: EventStore; clock: () => Date },
): void {
  registerRoute(app, createAccountRoute, async (request, reply) => {
    const body = request.body as CreateAccountBody;
    reply.status(201);
    return provisionAccount(
      { db: deps.db, eventStore: deps.eventStore },
      { name: body.name, tier: body.tier, environment: body.environment ?? 'live' },
      deps.clock(),
    );
  });
}
