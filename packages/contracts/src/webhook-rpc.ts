import { Type } from '@sinclair/typebox';
import { PrincipalSchema, type RpcDefinition } from './rpc.ts';
import {
  CreatedWebhookEndpoint,
  CreateWebhookEndpointBody,
  ListWebhookAttemptsQuery,
  ListWebhookEndpointsQuery,
  ListWebhookMessagesQuery,
  ReplayedWebhookMessages,
  ReplayWebhookMessagesBody,
  RotatedWebhookSecret,
  UpdateWebhookEndpointBody,
  WebhookAttemptList,
  WebhookEndpointList,
  WebhookEndpointView,
  WebhookMessageList,
  WebhookMessageView,
} from './schemas/webhooks.ts';

const service = 'compliance-service';
const Id = Type.String();
/** The id of the API key the gateway authenticated, recorded as the endpoint's creator or last changer. */
const ActingKeyId = Type.Optional(Type.String({ maxLength: 100 }));

/** Webhook endpoints and their messages (compliance-service, src/webhooks/endpoints.ts). */
export const createWebhookEndpointRpc = {
  service,
  operation: 'createWebhookEndpoint',
  request: Type.Object({ principal: PrincipalSchema, body: CreateWebhookEndpointBody, actingKeyId: ActingKeyId }),
  response: CreatedWebhookEndpoint,
} satisfies RpcDefinition;

export const listWebhookEndpointsRpc = {
  service,
  operation: 'listWebhookEndpoints',
  request: Type.Object({ principal: PrincipalSchema, query: ListWebhookEndpointsQuery }),
  response: WebhookEndpointList,
} satisfies RpcDefinition;

export const getWebhookEndpointRpc = {
  service,
  operation: 'getWebhookEndpoint',
  // `withHeldAssetEvents`: the answer also names the asset event types of the messages the endpoint
  // holds (the gateway's scope check: an endpoint narrowed since still holds them). An older
  // service ignores it and leaves the field out.
  request: Type.Object({ principal: PrincipalSchema, id: Id, withHeldAssetEvents: Type.Optional(Type.Boolean()) }),
  response: Type.Intersect([WebhookEndpointView, Type.Object({ heldAssetEvents: Type.Optional(Type.Array(Type.String())) })]),
} satisfies RpcDefinition;

export const updateWebhookEndpointRpc = {
  service,
  operation: 'updateWebhookEndpoint',
  request: Type.Object({ principal: PrincipalSchema, id: Id, body: UpdateWebhookEndpointBody, actingKeyId: ActingKeyId }),
  response: WebhookEndpointView,
} satisfies RpcDefinition;

export const deleteWebhookEndpointRpc = {
  service,
  operation: 'deleteWebhookEndpoint',
  request: Type.Object({ principal: PrincipalSchema, id: Id }),
  response: Type.Object({ deleted: Type.Literal(true) }),
} satisfies RpcDefinition;

export const rotateWebhookSecretRpc = {
  service,
  operation: 'rotateWebhookSecret',
  // requestKey: the gateway's scoped hash of the request's Idempotency-Key, when it has one.
  request: Type.Object({
    principal: PrincipalSchema,
    id: Id,
    requestKey: Type.Optional(Type.String({ maxLength: 200 })),
    actingKeyId: ActingKeyId,
  }),
  response: RotatedWebhookSecret,
} satisfies RpcDefinition;

export const testWebhookEndpointRpc = {
  service,
  operation: 'testWebhookEndpoint',
  request: Type.Object({ principal: PrincipalSchema, id: Id }),
  response: WebhookMessageView,
} satisfies RpcDefinition;

export const listWebhookMessagesRpc = {
  service,
  operation: 'listWebhookMessages',
  request: Type.Object({ principal: PrincipalSchema, id: Id, query: ListWebhookMessagesQuery }),
  response: WebhookMessageList,
} satisfies RpcDefinition;

export const listWebhookAttemptsRpc = {
  service,
  operation: 'listWebhookAttempts',
  // `query` is optional for an older gateway, which asked for every attempt: it gets the first page.
  request: Type.Object({ principal: PrincipalSchema, id: Id, messageId: Id, query: Type.Optional(ListWebhookAttemptsQuery) }),
  response: WebhookAttemptList,
} satisfies RpcDefinition;

export const replayWebhookMessageRpc = {
  service,
  operation: 'replayWebhookMessage',
  request: Type.Object({ principal: PrincipalSchema, id: Id, messageId: Id }),
  response: WebhookMessageView,
} satisfies RpcDefinition;

export const replayFailedWebhookMessagesRpc = {
  service,
  operation: 'replayFailedWebhookMessages',
  request: Type.Object({ principal: PrincipalSchema, id: Id, body: ReplayWebhookMessagesBody }),
  response: ReplayedWebhookMessages,
} satisfies RpcDefinition;

/**
 * A daily quota crossed 80% or 100% (the gateway sees it as it spends). compliance-service records
 * each threshold once per account, quota and UTC day and writes the quota.threshold messages.
 */
export const recordQuotaThresholdRpc = {
  service,
  operation: 'recordQuotaThreshold',
  request: Type.Object({
    principal: PrincipalSchema,
    quota: Type.Union([Type.Literal('generate'), Type.Literal('verify'), Type.Literal('requests')]),
    threshold: Type.Union([Type.Literal(80), Type.Literal(100)]),
    used: Type.Integer(),
    limit: Type.Integer(),
    day: Type.String(),
  }),
  response: Type.Object({ recorded: Type.Boolean() }),
} satisfies RpcDefinition;
