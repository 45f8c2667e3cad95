import {
  type CreateWebhookEndpointBody,
  createWebhookEndpointRoute,
  createWebhookEndpointRpc,
  deleteWebhookEndpointRoute,
  deleteWebhookEndpointRpc,
  disableWebhookEndpointRoute,
  getWebhookEndpointRoute,
  getWebhookEndpointRpc,
  type ListWebhookAttemptsQuery,
  type ListWebhookEndpointsQuery,
  type ListWebhookMessagesQuery,
  listWebhookAttemptsRoute,
  listWebhookAttemptsRpc,
  listWebhookEndpointsRoute,
  listWebhookEndpointsRpc,
  listWebhookMessagesRoute,
  listWebhookMessagesRpc,
  type ReplayWebhookMessagesBody,
  replayFailedWebhookMessagesRoute,
  replayFailedWebhookMessagesRpc,
  replayWebhookMessageRoute,
  replayWebhookMessageRpc,
  rotateWebhookSecretRoute,
  rotateWebhookSecretRpc,
  testWebhookEndpointRoute,
  testWebhookEndpointRpc,
  type UpdateWebhookEndpointBody,
  updateWebhookEndpointRoute,
  updateWebhookEndpointRpc,
} from '@hallmark/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { principalOf } from '../auth/request-auth.ts';
import { requestKeyField } from '../idempotency.ts';
import { registerRoute } from '../route-registry.ts';
import type { ServiceCaller } from '../service-call.ts';

const params = (request: FastifyRequest) => request.params as { id: string; messageId?: string };

/** /webhooks/endpoints…: Standard Webhooks endpoints, served by compliance-service (docs/WEBHOOKS.md). */
export function registerWebhookRoutes(app: FastifyInstance, deps: { services: ServiceCaller }): void {
  const { services } = deps;
  registerRoute(app, createWebhookEndpointRoute, async (request, reply) => {
    const body = request.body as CreateWebhookEndpointBody;
    const endpoint = await services.call(createWebhookEndpointRpc, { principal: principalOf(request), body }, request.id);
    reply.status(201);
    return endpoint;
  });
  registerRoute(app, listWebhookEndpointsRoute, async (request) =>
    services.call(
      listWebhookEndpointsRpc,
      { principal: principalOf(request), query: request.query as ListWebhookEndpointsQuery },
      request.id,
    ),
  );
  registerRoute(app, getWebhookEndpointRoute, async (request) =>
    services.call(getWebhookEndpointRpc, { principal: principalOf(request), id: params(request).id }, request.id),
  );
  registerRoute(app, updateWebhookEndpointRoute, async (request) =>
    services.call(
      updateWebhookEndpointRpc,
      { principal: principalOf(request), id: params(request).id, body: request.body as UpdateWebhookEndpointBody },
      request.id,
    ),
  );
  registerRoute(app, disableWebhookEndpointRoute, async (request) =>
    services.call(
      updateWebhookEndpointRpc,
      { principal: principalOf(request), id: params(request).id, body: { enabled: false } },
      request.id,
    ),
  );
  registerRoute(app, deleteWebhookEndpointRoute, async (request, reply) => {
    await services.call(deleteWebhookEndpointRpc, { principal: principalOf(request), id: params(request).id }, request.id);
    return reply.status(204).send();
  });
  registerRoute(app, rotateWebhookSecretRoute, async (request) =>
    services.call(
      rotateWebhookSecretRpc,
      {
        principal: principalOf(request),
        id: params(request).id,
        ...requestKeyField(request),
      },
      request.id,
    ),
  );
  registerRoute(app, testWebhookEndpointRoute, async (request, reply) => {
    const message = await services.call(
      testWebhookEndpointRpc,
      { principal: principalOf(request), id: params(request).id },
      request.id,
    );
    reply.status(202);
    return message;
  });
  registerRoute(app, listWebhookMessagesRoute, async (request) =>
    services.call(
      listWebhookMessagesRpc,
      { principal: principalOf(request), id: params(request).id, query: request.query as ListWebhookMessagesQuery },
      request.id,
    ),
  );
  registerRoute(app, listWebhookAttemptsRoute, async (request) =>
    services.call(
      listWebhookAttemptsRpc,
      {
        principal: principalOf(request),
        id: params(request).id,
        messageId: params(request).messageId ?? '',
        query: request.query as ListWebhookAttemptsQuery,
      },
      request.id,
    ),
  );
  registerRoute(app, replayWebhookMessageRoute, async (request, reply) => {
    const message = await services.call(
      replayWebhookMessageRpc,
      { principal: principalOf(request), id: params(request).id, messageId: params(request).messageId ?? '' },
      request.id,
    );
    reply.status(202);
    return message;
  });
  registerRoute(app, replayFailedWebhookMessagesRoute, async (request, reply) => {
    const replayed = await services.call(
      replayFailedWebhookMessagesRpc,
      { principal: principalOf(request), id: params(request).id, body: request.body as ReplayWebhookMessagesBody },
      request.id,
    );
    reply.status(202);
    return replayed;
  });
}
