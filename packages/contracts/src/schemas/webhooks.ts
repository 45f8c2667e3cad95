import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Pagination, printableHttpUrlPattern, printableTextPattern } from './common.ts';

/** Every event a webhook endpoint can subscribe to (docs/WEBHOOKS.md, the catalogue). */
export const webhookEventTypes = [
  'scan.suspicious',
  'scan.counterfeit',
  'code.reported',
  'code.blocked',
  'code.unblocked',
  'transfer.completed',
  'transfer.locked',
  'transfer.cancelled',
  'quota.threshold',
  'key.expiring',
  'endpoint.disabled',
  'test',
] as const;
export type WebhookEventType = (typeof webhookEventTypes)[number];

/**
 * The event types whose messages carry an account's asset data (scans with the item and where it
 * was scanned, reports, blocks, sales): a key subscribes an endpoint to them, or reads their
 * messages, only if it holds `assets:read` as well as `keys:*`, so an endpoint is no way around the
 * scopes (docs/WEBHOOKS.md, "Scopes").
 */
export const assetWebhookEventTypes: ReadonlySet<WebhookEventType> = new Set(
  webhookEventTypes.filter((type) => /^(scan|code|transfer)\./.test(type)),
);

const EventType = Type.Union(
  webhookEventTypes.map((type) => Type.Literal(type)),
  { description: 'An event type of the catalogue (docs/WEBHOOKS.md)' },
);

/**
 * Endpoints an account may have in one environment, enabled or disabled (409 CONFLICT past it,
 * details `{ limit }`): each is a delivery target the worker visits at every claim.
 */
export const maxWebhookEndpoints = 20;

const WebhookUrl = Type.String({
  minLength: 1,
  maxLength: 2048,
  pattern: printableHttpUrlPattern,
  description:
    'An http(s) URL, without control characters (tabs, line breaks) or characters that change text direction. Private, loopback and link-local addresses are refused at delivery (docs/WEBHOOKS.md, SSRF).',
  examples: ['https://hooks.example.com/hallmark'],
});
const Description = Type.String({ maxLength: 500, pattern: printableTextPattern, examples: ['Production alerts'] });
const EventTypes = Type.Array(EventType, { minItems: 1, maxItems: webhookEventTypes.length, uniqueItems: true });

export const CreateWebhookEndpointBody = Type.Object(
  { url: WebhookUrl, eventTypes: EventTypes, description: Type.Optional(Description) },
  { additionalProperties: false },
);
export type CreateWebhookEndpointBody = Static<typeof CreateWebhookEndpointBody>;

export const UpdateWebhookEndpointBody = Type.Object(
  {
    url: Type.Optional(WebhookUrl),
    eventTypes: Type.Optional(EventTypes),
    description: Type.Optional(Description),
    enabled: Type.Optional(Type.Boolean({ description: 'true enables a disabled endpoint again (failures forgotten)' })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateWebhookEndpointBody = Static<typeof UpdateWebhookEndpointBody>;

export const WebhookEndpointView = Type.Object({
  id: Type.String({ examples: ['whep_0192f1c2a3b47c8d9e0f112233445566'] }),
  url: Type.String(),
  description: Type.String(),
  eventTypes: Type.Array(EventType),
  status: Type.Union([Type.Literal('enabled'), Type.Literal('disabled')]),
  disabledReason: Type.Union([Type.String(), Type.Null()], {
    description: '`gone` (the endpoint answered 410), `failing` (5 days of failures) or `disabled` (by API)',
  }),
  failingSince: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  previousSecretExpiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'Until then messages also carry a v1 signature under the secret before the last rotation',
  }),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
  createdBy: Type.Union([Type.String(), Type.Null()], {
    description:
      'the id of the API key that created the endpoint (null for endpoints made before creators were recorded). After a key leaks, `GET /webhooks/endpoints?createdBy=<its id>` lists the endpoints it made, to delete them',
  }),
  changedBy: Type.Union([Type.String(), Type.Null()], {
    description:
      'the id of the API key that last changed the endpoint (its URL, event types, description, status or secret); null when no key has since it was made. After a key leaks, `?changedBy=<its id>` lists the endpoints it changed last',
  }),
});
export type WebhookEndpointView = Static<typeof WebhookEndpointView>;

const Secret = Type.String({
  pattern: '^whsec_[A-Za-z0-9+/]+=*$',
  description: 'The signing secret (Standard Webhooks: whsec_ and base64 of 32 random bytes). Shown only in this answer.',
  examples: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
});

export const CreatedWebhookEndpoint = Type.Composite([WebhookEndpointView, Type.Object({ secret: Secret })]);
export type CreatedWebhookEndpoint = Static<typeof CreatedWebhookEndpoint>;

export const RotatedWebhookSecret = Type.Object({
  secret: Secret,
  previousSecretExpiresAt: Type.String({ format: 'date-time' }),
});
export type RotatedWebhookSecret = Static<typeof RotatedWebhookSecret>;

export const WebhookEndpointList = Type.Object({ endpoints: Type.Array(WebhookEndpointView), pagination: Pagination });
export type WebhookEndpointList = Static<typeof WebhookEndpointList>;

const Limit = Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 }));
const Cursor = Type.Optional(Type.String({ maxLength: 200 }));

const KeyIdFilter = (description: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 100, description }));

export const ListWebhookEndpointsQuery = Type.Object(
  {
    limit: Limit,
    cursor: Cursor,
    createdBy: KeyIdFilter('only the endpoints created by the API key of this id'),
    changedBy: KeyIdFilter('only the endpoints the API key of this id changed last'),
  },
  { additionalProperties: false },
);
export type ListWebhookEndpointsQuery = Static<typeof ListWebhookEndpointsQuery>;

const MessageStatus = Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]);

export const ListWebhookMessagesQuery = Type.Object(
  { status: Type.Optional(MessageStatus), limit: Limit, cursor: Cursor },
  { additionalProperties: false },
);
export type ListWebhookMessagesQuery = Static<typeof ListWebhookMessagesQuery>;

export const WebhookEndpointIdParam = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });
export const WebhookMessageParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 100 }),
  messageId: Type.String({ minLength: 1, maxLength: 100 }),
});

export const WebhookMessageView = Type.Object({
  id: Type.String({ description: 'The webhook-id header: the same on every attempt', examples: ['msg_6f1c…'] }),
  eventType: EventType,
  status: MessageStatus,
  attempts: Type.Integer(),
  nextAttemptAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  lastResponseCode: Type.Union([Type.Integer(), Type.Null()]),
  createdAt: Type.String({ format: 'date-time' }),
  deliveredAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  payload: Type.Record(Type.String(), Type.Unknown(), { description: 'The body sent: { type, timestamp, data }' }),
});
export type WebhookMessageView = Static<typeof WebhookMessageView>;

export const WebhookMessageList = Type.Object({ messages: Type.Array(WebhookMessageView), pagination: Pagination });
export type WebhookMessageList = Static<typeof WebhookMessageList>;

export const WebhookAttemptView = Type.Object({
  id: Type.String(),
  attemptedAt: Type.String({ format: 'date-time' }),
  status: Type.Union([Type.Literal('succeeded'), Type.Literal('failed')]),
  responseCode: Type.Union([Type.Integer(), Type.Null()], { description: 'null when no answer came (refused, timed out)' }),
  error: Type.Union([Type.String(), Type.Null()]),
  durationMs: Type.Integer(),
});
export const ListWebhookAttemptsQuery = Type.Object({ limit: Limit, cursor: Cursor }, { additionalProperties: false });
export type ListWebhookAttemptsQuery = Static<typeof ListWebhookAttemptsQuery>;
export const WebhookAttemptList = Type.Object({ attempts: Type.Array(WebhookAttemptView), pagination: Pagination });
export type WebhookAttemptList = Static<typeof WebhookAttemptList>;

export const ReplayWebhookMessagesBody = Type.Object(
  {
    since: Type.String({ format: 'date-time', description: 'Failed messages created at or after this time' }),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'and before this time (default: now)' })),
  },
  { additionalProperties: false },
);
export type ReplayWebhookMessagesBody = Static<typeof ReplayWebhookMessagesBody>;
export const ReplayedWebhookMessages = Type.Object({ replayed: Type.Integer() });

// ---- Event payloads: the body of each message is { type, timestamp, data } -----------------------

const Iso = Type.String({ format: 'date-time' });
const ScanData = Type.Object({
  scanId: Type.String(),
  gtin: Type.String(),
  serial: Type.String(),
  batch: Type.Optional(Type.String()),
  verdict: Type.String(),
  riskIndicators: Type.Array(Type.String()),
  scanNumber: Type.Integer(),
  scannedAt: Iso,
  country: Type.Optional(Type.String()),
  location: Type.Optional(Type.Object({ latitude: Type.Number(), longitude: Type.Number() })),
});
const ReportData = Type.Object({
  reportId: Type.String(),
  assetId: Type.Union([Type.String(), Type.Null()]),
  gtin: Type.String(),
  serial: Type.String(),
  reason: Type.Union([Type.String(), Type.Null()]),
});
const BlockData = Type.Object({
  source: Type.Union([Type.Literal('blocklist'), Type.Literal('report')], {
    description:
      '`blocklist`: an entry of the blocklist (POST /blocklist, a code or a serial range; DELETE /blocklist/{blockId} removes it); `report`: a confirmed report (POST /code/reports/{reportId}/confirm; …/lift lifts its block)',
  }),
  gtin: Type.String(),
  serial: Type.Optional(Type.String({ description: 'source report' })),
  serialFrom: Type.Optional(Type.String({ description: 'source blocklist' })),
  serialTo: Type.Optional(Type.String({ description: 'source blocklist' })),
  kind: Type.Optional(Type.String({ description: 'source blocklist: counterfeit or withdrawn' })),
  blockId: Type.Optional(Type.String()),
  reportId: Type.Optional(Type.String()),
  assetId: Type.Optional(Type.String()),
  reason: Type.Union([Type.String(), Type.Null()], {
    description:
      'code.blocked: why it was blocked, as verifications show it (the owner’s words; null when none). code.unblocked from source blocklist: the entry’s reason as it was blocked; from source report: why the owner lifted it (null when none)',
  }),
  status: Type.Optional(Type.String({ description: 'source blocklist: `active`, or `removed` in code.unblocked' })),
  createdAt: Type.Optional(Type.String({ format: 'date-time', description: 'source blocklist: when the entry was made' })),
  removedAt: Type.Optional(
    Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'source blocklist: when it was removed' }),
  ),
});
const TransferData = Type.Object({
  assetId: Type.String(),
  kind: Type.Optional(
    Type.Union([Type.Literal('sold'), Type.Literal('transferred')], { description: 'transfer.completed only' }),
  ),
  transferId: Type.String(),
  fromOwnerId: Type.Optional(Type.String()),
  toOwnerId: Type.Optional(Type.String()),
  salePrice: Type.Optional(Type.Number()),
  saleCurrency: Type.Optional(Type.String()),
});

const envelope = (type: WebhookEventType, data: TSchema) =>
  Type.Object(
    { type: Type.Literal(type), timestamp: Iso, environment: Type.Union([Type.Literal('test'), Type.Literal('live')]), data },
    { title: `${type} message` },
  );

/** Each event's message body, for the OpenAPI document's `webhooks` section. */
export const webhookEventPayloads: Readonly<Record<WebhookEventType, { summary: string; schema: TSchema }>> = {
  'scan.suspicious': {
    summary: 'A scan of one of the account’s codes was SUSPICIOUS.',
    schema: envelope('scan.suspicious', ScanData),
  },
  'scan.counterfeit': {
    summary: 'A scan of a link of one of the account’s GTINs was COUNTERFEIT (a forged signature or a blocked code).',
    schema: envelope('scan.counterfeit', ScanData),
  },
  'code.reported': { summary: 'Someone reported one of the account’s codes.', schema: envelope('code.reported', ReportData) },
  'code.blocked': {
    summary: 'A code or serial range was put on the blocklist, or a report was confirmed: scans of it are no longer AUTHENTIC.',
    schema: envelope('code.blocked', BlockData),
  },
  'code.unblocked': {
    summary:
      'A blocklist entry was removed, or the block of a confirmed report was lifted: scans of the code are no longer blocked by it (another block of the code may still stand).',
    schema: envelope('code.unblocked', BlockData),
  },
  'transfer.completed': {
    summary: 'An auction object changed hands (sold, or transferred).',
    schema: envelope('transfer.completed', TransferData),
  },
  'transfer.locked': {
    summary: 'A transfer was locked after too many wrong transfer codes.',
    schema: envelope('transfer.locked', TransferData),
  },
  'transfer.cancelled': {
    summary: 'A pending transfer was cancelled by the seller: its code completes nothing.',
    schema: envelope('transfer.cancelled', TransferData),
  },
  'quota.threshold': {
    summary: 'The account spent 80% or 100% of a daily quota (once per quota, threshold and UTC day).',
    schema: envelope(
      'quota.threshold',
      Type.Object({
        quota: Type.Union([Type.Literal('generate'), Type.Literal('verify'), Type.Literal('requests')]),
        threshold: Type.Union([Type.Literal(80), Type.Literal(100)]),
        used: Type.Integer(),
        limit: Type.Integer(),
        day: Type.String({ format: 'date' }),
      }),
    ),
  },
  'key.expiring': {
    summary: 'An API key expires in 7 days, or in 1 day (each announced once).',
    schema: envelope(
      'key.expiring',
      Type.Object({
        keyId: Type.String(),
        name: Type.String(),
        expiresAt: Iso,
        daysLeft: Type.Union([Type.Literal(7), Type.Literal(1)]),
      }),
    ),
  },
  'endpoint.disabled': {
    summary: 'One of the account’s endpoints was disabled (it answered 410, or failed for 5 days); sent to its other endpoints.',
    schema: envelope(
      'endpoint.disabled',
      Type.Object({
        endpointId: Type.String(),
        url: Type.String(),
        reason: Type.Union([Type.Literal('gone'), Type.Literal('failing')]),
        failingSince: Type.Union([Iso, Type.Null()]),
      }),
    ),
  },
  test: {
    summary: 'Sent on demand by POST /webhooks/endpoints/{id}/test.',
    schema: envelope('test', Type.Object({ endpointId: Type.String(), message: Type.String() })),
  },
};
