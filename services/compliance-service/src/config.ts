import { MasterKeySetting } from '@hallmark/runtime';
import { type Static, Type } from '@sinclair/typebox';

export const ComplianceServiceConfig = Type.Object({
  // Unseals the signing keys that sign checkpoints.
  HALLMARK_MASTER_KEY: MasterKeySetting,
  HALLMARK_CHECKPOINT_ORIGIN: Type.String({
    pattern: '^[A-Za-z0-9.-]+(/[A-Za-z0-9._-]+)*$',
    default: 'hallmark',
    description: 'prefix of checkpoint origins (<prefix>/assets/<assetId>) and key names, e.g. compliance.brand.com',
  }),
  HALLMARK_PROJECTION_WAIT_MS: Type.Integer({
    minimum: 0,
    maximum: 60_000,
    default: 2_000,
    description:
      'how long a compliance read waits for the Merkle projection to hold every event already stored before it answers 503 with Retry-After',
  }),
  HALLMARK_WEBHOOKS_ALLOW_PRIVATE: Type.Boolean({
    default: false,
    description:
      'deliver webhooks to private, loopback, link-local and other reserved addresses too (SSRF guard off; tests and closed networks only)',
  }),
  HALLMARK_WEBHOOK_RETRY_SCHEDULE_MS: Type.String({
    pattern: '^\\d+(,\\d+)*$',
    default: '5000,300000,1800000,7200000,18000000,36000000,36000000',
    description: 'delays (ms) after each failed webhook attempt; past the last the message fails (Standard Webhooks schedule)',
  }),
  HALLMARK_WEBHOOK_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    maximum: 60_000,
    default: 15_000,
    description: 'one webhook attempt at most',
  }),
  HALLMARK_WEBHOOK_LEASE_MS: Type.Integer({
    minimum: 200,
    maximum: 600_000,
    default: 30_000,
    description:
      'how long a claimed webhook message is one worker’s; must outlast the timeout. A worker that dies mid-delivery leaves it to another after this',
  }),
  HALLMARK_WEBHOOK_POLL_MS: Type.Integer({
    minimum: 10,
    maximum: 60_000,
    default: 250,
    description: 'how often each delivery worker looks for due messages (messages written on the same replica wake it at once)',
  }),
  HALLMARK_WEBHOOK_DISABLE_AFTER_MS: Type.Integer({
    minimum: 0,
    default: 432_000_000,
    description: 'an endpoint failing every attempt this long (5 days) is disabled and endpoint.disabled is sent',
  }),
  HALLMARK_WEBHOOK_SECRET_GRACE_MS: Type.Integer({
    minimum: 0,
    default: 86_400_000,
    description: 'how long the secret before a rotation still signs messages (v1), so receivers can switch',
  }),
  HALLMARK_WEBHOOK_RETENTION_DAYS: Type.Integer({
    minimum: 1,
    default: 30,
    description: 'delivered and failed webhook messages (with their attempts) are deleted this many days after they were made',
  }),
  HALLMARK_WEBHOOK_CHECK_MS: Type.Integer({
    minimum: 100,
    default: 60_000,
    description:
      'how often key expiry is checked for key.expiring (code.reported comes from the account streams as the reports are filed)',
  }),
});
export type ComplianceServiceConfig = Static<typeof ComplianceServiceConfig>;
