import { defineRoute } from './http-route.ts';
import {
  CreatedWebhookEndpoint,
  CreateWebhookEndpointBody,
  ListWebhookAttemptsQuery,
  ListWebhookEndpointsQuery,
  ListWebhookMessagesQuery,
  maxWebhookEndpoints,
  ReplayedWebhookMessages,
  ReplayWebhookMessagesBody,
  RotatedWebhookSecret,
  UpdateWebhookEndpointBody,
  WebhookAttemptList,
  WebhookEndpointIdParam,
  WebhookEndpointList,
  WebhookEndpointView,
  WebhookMessageList,
  WebhookMessageParams,
  WebhookMessageView,
} from './schemas/webhooks.ts';

const base = '/api/v1/webhooks/endpoints';
const errors = ['VALIDATION_ERROR', 'SERVICE_UNAVAILABLE'] as const;
const tags = ['webhooks'];

/** Standard Webhooks endpoints (docs/WEBHOOKS.md); served by compliance-service's webhook module. */
export const createWebhookEndpointRoute = defineRoute({
  operationId: 'createWebhookEndpoint',
  method: 'POST',
  idempotent: true,
  path: base,
  summary: `Add an endpoint: an http(s) URL, the event types it receives and a description. The answer carries the signing secret (whsec_…), shown only here. At most ${maxWebhookEndpoints} endpoints per account and environment (CONFLICT, details.limit).`,
  tags,
  auth: 'api-key',
  scope: 'keys:write',
  body: CreateWebhookEndpointBody,
  responses: { 201: { description: 'The endpoint and its secret', schema: CreatedWebhookEndpoint } },
  errors: [...errors, 'CONFLICT'],
});

export const listWebhookEndpointsRoute = defineRoute({
  operationId: 'listWebhookEndpoints',
  method: 'GET',
  path: base,
  summary: 'The account’s endpoints in this environment, oldest first (no secrets).',
  tags,
  auth: 'api-key',
  scope: 'keys:read',
  querystring: ListWebhookEndpointsQuery,
  responses: { 200: { description: 'A page of endpoints', schema: WebhookEndpointList } },
  errors: [...errors],
});

export const getWebhookEndpointRoute = defineRoute({
  operationId: 'getWebhookEndpoint',
  method: 'GET',
  path: `${base}/{id}`,
  summary: 'One endpoint (no secret).',
  tags,
  auth: 'api-key',
  scope: 'keys:read',
  params: WebhookEndpointIdParam,
  responses: { 200: { description: 'The endpoint', schema: WebhookEndpointView } },
  errors: [...errors, 'NOT_FOUND'],
});

export const updateWebhookEndpointRoute = defineRoute({
  operationId: 'updateWebhookEndpoint',
  method: 'PATCH',
  path: `${base}/{id}`,
  summary: 'Change the URL, event types or description; `enabled: true` enables a disabled endpoint, `false` disables it.',
  tags,
  auth: 'api-key',
  scope: 'keys:write',
  params: WebhookEndpointIdParam,
  body: UpdateWebhookEndpointBody,
  responses: { 200: { description: 'The endpoint now', schema: WebhookEndpointView } },
  errors: [...errors, 'NOT_FOUND'],
});

export const disableWebhookEndpointRoute = defineRoute({
  operationId: 'disableWebhookEndpoint',
  method: 'POST',
  path: `${base}/{id}/disable`,
  summary: 'Stop delivering to the endpoint; its messages wait (pending) until it is enabled again. Idempotent.',
  tags,
  auth: 'api-key',
  scope: 'keys:write',
  params: WebhookEndpointIdParam,
  responses: { 200: { description: 'The endpoint now', schema: WebhookEndpointView } },
  errors: [...errors, 'NOT_FOUND'],
});

export const deleteWebhookEndpointRoute = defineRoute({
  operationId: 'deleteWebhookEndpoint',
  method: 'DELETE',
  path: `${base}/{id}`,
  summary: 'Delete the endpoint with its messages and attempts; nothing more is sent to it.',
  tags,
  auth: 'api-key',
  scope: 'keys:write',
  params: WebhookEndpointIdParam,
  responses: { 204: { description: 'Deleted' } },
  errors: [...errors, 'NOT_FOUND'],
});

export const rotateWebhookSecretRoute = defineRoute({
  operationId: 'rotateWebhookSecret',
  method: 'POST',
  // A retry of a rotation whose answer was lost would rotate again and drop the secret the receiver
  // still uses: with an Idempotency-Key it gets the first answer instead.
  idempotent: true,
  path: `${base}/{id}/rotate-secret`,
  summary:
    'A new signing secret (shown only here). Until previousSecretExpiresAt (24 h) every message carries a v1 signature under each secret, so receivers can switch without losing one. Send an Idempotency-Key: a retry then gets the same secret rather than rotating again.',
  tags,
  auth: 'api-key',
  scope: 'keys:write',
  params: WebhookEndpointIdParam,
  responses: { 200: { description: 'The new secret', schema: RotatedWebhookSecret } },
  errors: [...errors, 'NOT_FOUND'],
});

export const testWebhookEndpointRoute = defineRoute({
  operationId: 'testWebhookEndpoint',
  method: 'POST',
  path: `${base}/{id}/test`,
  summary:
    'Queue a `test` message to the endpoint now (whatever event types it takes); delivered as any other message. CONFLICT when the endpoint is disabled.',
  tags,
  auth: 'api-key',
  scope: 'keys:write',
  params: WebhookEndpointIdParam,
  responses: { 202: { description: 'The queued message', schema: WebhookMessageView } },
  errors: [...errors, 'NOT_FOUND', 'CONFLICT'],
});

export const listWebhookMessagesRoute = defineRoute({
  operationId: 'listWebhookMessages',
  method: 'GET',
  path: `${base}/{id}/messages`,
  summary: 'The endpoint’s messages, newest first, with their status, attempts and last response code; filtered by status.',
  tags,
  auth: 'api-key',
  scope: 'keys:read',
  params: WebhookEndpointIdParam,
  querystring: ListWebhookMessagesQuery,
  responses: { 200: { description: 'A page of messages', schema: WebhookMessageList } },
  errors: [...errors, 'NOT_FOUND'],
});

export const listWebhookAttemptsRoute = defineRoute({
  operationId: 'listWebhookAttempts',
  method: 'GET',
  path: `${base}/{id}/messages/{messageId}/attempts`,
  summary: 'The delivery attempts of one message, oldest first, paged: time, status, response code, error and duration.',
  tags,
  auth: 'api-key',
  scope: 'keys:read',
  params: WebhookMessageParams,
  querystring: ListWebhookAttemptsQuery,
  responses: { 200: { description: 'The attempts', schema: WebhookAttemptList } },
  errors: [...errors, 'NOT_FOUND'],
});

export const replayWebhookMessageRoute = defineRoute({
  operationId: 'replayWebhookMessage',
  method: 'POST',
  path: `${base}/{id}/messages/{messageId}/replay`,
  summary: 'Send one message again now (same webhook-id), whatever its status; its retry schedule starts over.',
  tags,
  auth: 'api-key',
  scope: 'keys:write',
  params: WebhookMessageParams,
  responses: { 202: { description: 'The message, queued', schema: WebhookMessageView } },
  errors: [...errors, 'NOT_FOUND'],
});

export const replayFailedWebhookMessagesRoute = defineRoute({
  operationId: 'replayFailedWebhookMessages',
  method: 'POST',
  path: `${base}/{id}/replay`,
  summary: 'Send again every failed message of the endpoint created in a time range (since, until).',
  tags,
  auth: 'api-key',
  scope: 'keys:write',
  params: WebhookEndpointIdParam,
  body: ReplayWebhookMessagesBody,
  responses: { 202: { description: 'How many were queued', schema: ReplayedWebhookMessages } },
  errors: [...errors, 'NOT_FOUND'],
});

export const webhookRoutes = [
  createWebhookEndpointRoute,
  listWebhookEndpointsRoute,
  getWebhookEndpointRoute,
  updateWebhookEndpointRoute,
  disableWebhookEndpointRoute,
  deleteWebhookEndpointRoute,
  rotateWebhookSecretRoute,
  testWebhookEndpointRoute,
  listWebhookMessagesRoute,
  listWebhookAttemptsRoute,
  replayWebhookMessageRoute,
  replayFailedWebhookMessagesRoute,
] as const;
