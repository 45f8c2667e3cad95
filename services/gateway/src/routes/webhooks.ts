import { holdsScope } from '@hallmark/accounts';
import {
  assetWebhookEventTypes,
  type CreateWebhookEndpointBody,
  createWebhookEndpointRoute,
  createWebhookEndpointRpc,
  deleteWebhookEndpointRoute,
  deleteWebhookEndpointRpc,
  disableWebhookEndpointRoute,
  getWebhookEndpointRoute,
  getWebhookEndpointRpc,
  HallmarkError,
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
import { principalOf, requireApiKey } from '../auth/request-auth.ts';
import { requestKeyField } from '../idempotency.ts';
import { registerRoute } from '../route-registry.ts';
import type { ServiceCaller } from '../service-call.ts';

const params = (request: FastifyRequest) => request.params as { id: string; messageId?: string };

type RequestKey = ReturnType<typeof requireApiKey>;

/** Whether the key may see the account's asset data (scans, reports, sales): `assets:read`. */
const readsAssets = (key: RequestKey) => holdsScope(key.scopes, key.isOperator, 'assets:read');

/** The refusal of an endpoint's asset events to a key without `assets:read`. */
function assetEventsRefusal(key: RequestKey, types: readonly string[]): HallmarkError {
  return new HallmarkError(
    'INSUFFICIENT_SCOPE',
    `Events that carry the account's asset data (${types.join(', ')}) need the scope assets:read as well: an endpoint, or its messages, would show what the key may not read.`,
    { required: 'assets:read', granted: [...key.scopes], eventTypes: [...types] },
  );
}

/** The authenticated key's id, which compliance-service records as the endpoint's creator or last changer. */
const actingKeyIdOf = (request: FastifyRequest) => requireApiKey(request).keyId;

const assetTypesOf = (types: readonly string[] | undefined) =>
  (types ?? []).filter((type) => assetWebhookEventTypes.has(type as never));

/** /webhooks/endpoints…: Standard Webhooks endpoints, served by compliance-service (docs/WEBHOOKS.md). */
export function registerWebhookRoutes(app: FastifyInstance, deps: { services: ServiceCaller }): void {
  const { services } = deps;
  /**
   * Endpoints are managed with `keys:*`, but one subscribed to asset events delivers, and lists, the
   * account's scans, reports and sales: a key without `assets:read` may not subscribe one, change one
   * (its URL, say, to its own; its secret; disable or delete it), nor read its messages or
   * attempts, nor replay them. Refuses otherwise.
   */
  const requireAssetReadFor = async (request: FastifyRequest, id: string | undefined, newTypes?: readonly string[]) => {
    const key = requireApiKey(request);
    if (readsAssets(key)) return;
    const asked = assetTypesOf(newTypes);
    if (asked.length > 0) throw assetEventsRefusal(key, asked);
    if (id === undefined) return;
    // What it is subscribed to, and what its messages hold: an endpoint narrowed since still holds
    // the scans it was sent, for a narrow key to list, replay, or send on to a URL of its own.
    const endpoint = await services.call(
      getWebhookEndpointRpc,
      { principal: principalOf(request), id, withHeldAssetEvents: true },
      request.id,
    );
    const guarded = assetTypesOf([...new Set([...endpoint.eventTypes, ...(endpoint.heldAssetEvents ?? [])])]);
    if (guarded.length > 0) throw assetEventsRefusal(key, guarded);
  };
  registerRoute(app, createWebhookEndpointRoute, async (request, reply) => {
    const body = request.body as CreateWebhookEndpointBody;
    await requireAssetReadFor(request, undefined, body.eventTypes);
    const endpoint = await services.call(
      createWebhookEndpointRpc,
      { principal: principalOf(request), body, actingKeyId: actingKeyIdOf(request) },
      request.id,
    );
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
  registerRoute(app, updateWebhookEndpointRoute, async (request) => {
    const body = request.body as UpdateWebhookEndpointBody;
    await requireAssetReadFor(request, params(request).id, body.eventTypes);
    return services.call(
      updateWebhookEndpointRpc,
      { principal: principalOf(request), id: params(request).id, body, actingKeyId: actingKeyIdOf(request) },
      request.id,
    );
  });
  // Disabling, deleting and a new secret change the endpoint as PATCH does: the same key's (a narrow
  // key given the secret signs asset events the brand's receiver takes for the service's, and one
  // that disables or deletes the endpoint silences its alerts: a review of 2026-12-05).
  registerRoute(app, disableWebhookEndpointRoute, async (request) => {
    await requireAssetReadFor(request, params(request).id);
    return services.call(
      updateWebhookEndpointRpc,
      { principal: principalOf(request), id: params(request).id, body: { enabled: false }, actingKeyId: actingKeyIdOf(request) },
      request.id,
    );
  });
  registerRoute(app, deleteWebhookEndpointRoute, async (request, reply) => {
    await requireAssetReadFor(request, params(request).id);
    await services.call(deleteWebhookEndpointRpc, { principal: principalOf(request), id: params(request).id }, request.id);
    return reply.status(204).send();
  });
  registerRoute(app, rotateWebhookSecretRoute, async (request) => {
    await requireAssetReadFor(request, params(request).id);
    return services.call(
      rotateWebhookSecretRpc,
      {
        principal: principalOf(request),
        id: params(request).id,
        ...requestKeyField(request),
        actingKeyId: actingKeyIdOf(request),
      },
      request.id,
    );
  });
  registerRoute(app, testWebhookEndpointRoute, async (request, reply) => {
    const message = await services.call(
      testWebhookEndpointRpc,
      { principal: principalOf(request), id: params(request).id },
      request.id,
    );
    reply.status(202);
    return message;
  });
  registerRoute(app, listWebhookMessagesRoute, async (request) => {
    await requireAssetReadFor(request, params(request).id);
    return services.call(
      listWebhookMessagesRpc,
      { principal: principalOf(request), id: params(request).id, query: request.query as ListWebhookMessagesQuery },
      request.id,
    );
  });
  registerRoute(app, listWebhookAttemptsRoute, async (request) => {
    await requireAssetReadFor(request, params(request).id);
    return services.call(
      listWebhookAttemptsRpc,
      {
        principal: principalOf(request),
        id: params(request).id,
        messageId: params(request).messageId ?? '',
        query: request.query as ListWebhookAttemptsQuery,
      },
      request.id,
    );
  });
  // A replay answers the message, payload and all, and sends the account's asset messages again: the
  // key that may list them only (a review of 2026-12-05: it read a scan's serial and place).
  registerRoute(app, replayWebhookMessageRoute, async (request, reply) => {
    await requireAssetReadFor(request, params(request).id);
    const message = await services.call(
      replayWebhookMessageRpc,
      { principal: principalOf(request), id: params(request).id, messageId: params(request).messageId ?? '' },
      request.id,
    );
    reply.status(202);
    return message;
  });
  registerRoute(app, replayFailedWebhookMessagesRoute, async (request, reply) => {
    await requireAssetReadFor(request, params(request).id);
    const replayed = await services.call(
      replayFailedWebhookMessagesRpc,
      { principal: principalOf(request), id: params(request).id, body: request.body as ReplayWebhookMessagesBody },
      request.id,
    );
    reply.status(202);
    return replayed;
  });
}
