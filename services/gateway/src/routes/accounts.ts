import {
  decideLiveOnlyAction,
  findAccount,
  listAccounts,
  provisionAccount,
  restrictionsViewOf,
  throwRefusal,
} from '@hallmark/accounts';
import {
  type AccountList,
  type CreateAccountBody,
  createAccountRoute,
  getMyAccountRoute,
  HallmarkError,
  type ListAccountsQuery,
  listAccountsRoute,
  type MyAccount,
} from '@hallmark/contracts';
import type { EventStore } from '@hallmark/event-store';
import type { SqlDatabase } from '@hallmark/sql';
import type { FastifyInstance } from 'fastify';
import { requireApiKey } from '../auth/request-auth.ts';
import { registerRoute } from '../route-registry.ts';

/**
 * GET /accounts/me: any valid key finds its own account and what it may do there.
 * GET /accounts: the operator's listing of every account, newest first.
 * POST /accounts: the operator provisions a tenant and receives its first key, once; both are
 * events in the new account's stream (`account.created`, `key.issued`). A live key only.
 */
export function registerAccountRoutes(
  app: FastifyInstance,
  deps: { db: SqlDatabase; eventStore: EventStore; clock: () => Date },
): void {
  registerRoute(app, getMyAccountRoute, async (request): Promise<MyAccount> => {
    const key = requireApiKey(request);
    const account = await findAccount(deps.db, key.accountId);
    // A key outlives its account only if rows were removed by hand: say so rather than answer half.
    if (!account) throw new HallmarkError('NOT_FOUND', 'The account of this key no longer exists.');
    return {
      account: {
        id: account.id,
        name: account.name,
        tier: account.tier,
        isOperator: account.isOperator,
        createdAt: account.createdAt.toISOString(),
      },
      key: {
        id: key.keyId,
        environment: key.environment,
        scopes: [...key.scopes],
        expiresAt: key.expiresAt?.toISOString() ?? null,
        restrictions: restrictionsViewOf(key.restrictions),
      },
    };
  });

  registerRoute(app, listAccountsRoute, async (request): Promise<AccountList> => {
    const query = request.query as ListAccountsQuery;
    const page = await listAccounts(deps.db, { limit: query.limit ?? 20, cursor: query.cursor });
    return {
      accounts: page.accounts.map((account) => ({
        id: account.id,
        name: account.name,
        tier: account.tier,
        isOperator: account.isOperator,
        createdAt: account.createdAt.toISOString(),
      })),
      pagination: page.pagination,
    };
  });

  // A new account and its first key (`*`, live by default) are the operator's act in live: never
  // with a test key, nor a console session switched to test, though the key holds `*`.
  registerRoute(app, createAccountRoute, async (request, reply) => {
    const refusal = decideLiveOnlyAction(requireApiKey(request).environment, 'create accounts');
    if (refusal) throwRefusal(refusal);
    const body = request.body as CreateAccountBody;
    reply.status(201);
    return provisionAccount(
      { db: deps.db, eventStore: deps.eventStore },
      { name: body.name, tier: body.tier, environment: body.environment ?? 'live' },
      deps.clock(),
    );
  });
}
