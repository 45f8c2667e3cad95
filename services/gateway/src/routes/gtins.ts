import { holdsScope } from '@hallmark/accounts';
import {
  claimGtinRoute,
  claimGtinRpc,
  type GtinClaimInput,
  grantGtinRoute,
  grantGtinRpc,
  HallmarkError,
  type ListGtinClaimsQuery,
  listAccountGtinsRoute,
  listGtinClaimsRpc,
  listGtinsRoute,
  revokeGtinClaimRoute,
  revokeGtinClaimRpc,
} from '@hallmark/contracts';
import type { FastifyInstance } from 'fastify';
import { principalOf, requireApiKey } from '../auth/request-auth.ts';
import { registerRoute } from '../route-registry.ts';
import type { ServiceCaller } from '../service-call.ts';

/**
 * Who may sign codes for which GTINs (docs/SIGNING.md, "Who may sign"): the operator's grants under
 * /accounts/{accountId}/gtins, an account's own list, self-service claims and revocations under /gtins.
 */
export function registerGtinRoutes(app: FastifyInstance, deps: { services: ServiceCaller }): void {
  registerRoute(app, grantGtinRoute, async (request, reply) => {
    const { accountId } = request.params as { accountId: string };
    const input = request.body as GtinClaimInput;
    reply.status(201);
    return deps.services.call(grantGtinRpc, { principal: principalOf(request), accountId, input }, request.id);
  });

  // The route needs accounts:write, so the caller is the operator; which environments it sees is code-service's rule.
  registerRoute(app, listAccountGtinsRoute, async (request) => {
    const { accountId } = request.params as { accountId: string };
    const query = request.query as ListGtinClaimsQuery;
    return deps.services.call(
      listGtinClaimsRpc,
      { principal: principalOf(request), accountId, query, asOperator: true },
      request.id,
    );
  });

  registerRoute(app, claimGtinRoute, async (request, reply) => {
    reply.status(201);
    return deps.services.call(
      claimGtinRpc,
      { principal: principalOf(request), input: request.body as GtinClaimInput },
      request.id,
    );
  });

  registerRoute(app, listGtinsRoute, async (request) => {
    const principal = principalOf(request);
    const query = request.query as ListGtinClaimsQuery;
    return deps.services.call(
      listGtinClaimsRpc,
      { principal, accountId: principal.accountId, query, asOperator: false },
      request.id,
    );
  });

  registerRoute(app, revokeGtinClaimRoute, async (request) => {
    const key = requireApiKey(request);
    const { claimId } = request.params as { claimId: string };
    const asOperator = holdsScope(key.scopes, key.isOperator, 'accounts:write');
    const holdsAll = holdsScope(key.scopes, key.isOperator, '*');
    try {
      return await deps.services.call(
        revokeGtinClaimRpc,
        { principal: principalOf(request), claimId, asOperator, holdsAll },
        request.id,
      );
    } catch (error) {
      // code-service knows what the claim needs, not the key's scopes: every INSUFFICIENT_SCOPE names
      // both (`required`, `granted`: docs/API.md, Authentication).
      if (error instanceof HallmarkError && error.code === 'INSUFFICIENT_SCOPE' && error.details?.granted === undefined) {
        throw new HallmarkError(error.code, error.message, { ...error.details, granted: [...key.scopes] });
      }
      throw error;
    }
  });
}
