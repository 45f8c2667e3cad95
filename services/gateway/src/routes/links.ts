import {
  type CreateLinkBody,
  createLinkRoute,
  createLinkRpc,
  deleteLinkRoute,
  deleteLinkRpc,
  type ListLinksQuery,
  listLinksRoute,
  listLinksRpc,
  type RemovalByCreatorQuery,
  removeLinksMadeByRoute,
  removeLinksMadeByRpc,
  type UpdateLinkBody,
  updateLinkRoute,
  updateLinkRpc,
} from '@hallmark/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { keyLimitOf, type RestrictedKeyLimits } from '../auth/key-restrictions.ts';
import { principalOf, requireApiKey } from '../auth/request-auth.ts';
import { registerRoute } from '../route-registry.ts';
import type { ServiceCaller } from '../service-call.ts';
import { removeInTurns } from './removals-in-turns.ts';

const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;

/** POST/GET/DELETE /links, PATCH/DELETE /links/{id}: the brand's links the resolver serves (docs/RESOLVER.md, "Links"). */
export function registerLinkRoutes(
  app: FastifyInstance,
  deps: { services: ServiceCaller; restrictedKeyLimits: RestrictedKeyLimits },
): void {
  registerRoute(app, createLinkRoute, async (request, reply) => {
    const key = requireApiKey(request);
    const link = await deps.services.call(
      createLinkRpc,
      {
        principal: principalOf(request),
        body: request.body as CreateLinkBody,
        keyId: key.keyId,
        ...keyLimitOf(key, deps.restrictedKeyLimits.links),
      },
      request.id,
    );
    reply.status(201);
    return link;
  });

  registerRoute(app, listLinksRoute, async (request) =>
    deps.services.call(listLinksRpc, { principal: principalOf(request), query: request.query as ListLinksQuery }, request.id),
  );

  registerRoute(app, updateLinkRoute, async (request) =>
    deps.services.call(
      updateLinkRpc,
      {
        principal: principalOf(request),
        id: idOf(request),
        body: request.body as UpdateLinkBody,
        keyId: requireApiKey(request).keyId,
      },
      request.id,
    ),
  );

  registerRoute(app, deleteLinkRoute, async (request, reply) => {
    await deps.services.call(
      deleteLinkRpc,
      { principal: principalOf(request), id: idOf(request), keyId: requireApiKey(request).keyId },
      request.id,
    );
    return reply.status(204).send();
  });

  registerRoute(app, removeLinksMadeByRoute, async (request) =>
    removeInTurns(() =>
      deps.services.call(
        removeLinksMadeByRpc,
        {
          principal: principalOf(request),
          createdBy: (request.query as RemovalByCreatorQuery).createdBy,
          keyId: requireApiKey(request).keyId,
        },
        request.id,
      ),
    ),
  );
}
