import type { SigningKeyring } from '@hallmark/accounts';
import type { Bus, Subscription } from '@hallmark/bus';
import {
  createWebhookEndpointRpc,
  deleteWebhookEndpointRpc,
  getWebhookEndpointRpc,
  listWebhookAttemptsRpc,
  listWebhookEndpointsRpc,
  listWebhookMessagesRpc,
  recordQuotaThresholdRpc,
  replayFailedWebhookMessagesRpc,
  replayWebhookMessageRpc,
  rotateWebhookSecretRpc,
  testWebhookEndpointRpc,
  updateWebhookEndpointRpc,
} from '@hallmark/contracts';
import type { EventStore } from '@hallmark/event-store';
import { type Logger, serveRpc } from '@hallmark/runtime';
import type { SqlDatabase } from '@hallmark/sql';
import type { ComplianceServiceConfig } from '../config.ts';
import { createWebhookEndpoints } from './endpoints.ts';
import { type Send, sendHttp } from './http-sender.ts';
import { parseSchedule } from './schedule.ts';
import { checkKeyExpiry, consumeScans, projectEventsToOutbox, recordQuotaThreshold, sweepWebhooks } from './sources.ts';
import { type Lookup, systemLookup } from './ssrf.ts';
import { startDeliveryWorker } from './worker.ts';

export interface WebhookModuleDeps {
  db: SqlDatabase;
  bus: Bus;
  eventStore: EventStore;
  log: Logger;
  clock: () => Date;
  masterKey: Uint8Array;
  keyring: SigningKeyring;
  config: ComplianceServiceConfig;
  /** Tests replace DNS and the connection (SSRF tests must never connect). */
  lookup?: Lookup;
  send?: Send;
}

/**
 * compliance-service's webhook module (docs/WEBHOOKS.md): the endpoints' RPCs, the outbox's
 * writers (scans from JetStream, transfers and blocks from the event store, reports and key expiry
 * by polling) and a delivery worker. Every replica runs all of them.
 */
export async function startWebhooks(deps: WebhookModuleDeps): Promise<Subscription[]> {
  const { db, bus, log, config } = deps;
  // The timeout bounds the whole attempt, DNS lookup included (deliverOnce), so a lease longer than
  // it is never taken over while its attempt still runs.
  if (config.HALLMARK_WEBHOOK_LEASE_MS <= config.HALLMARK_WEBHOOK_TIMEOUT_MS) {
    throw new Error('HALLMARK_WEBHOOK_LEASE_MS must be longer than HALLMARK_WEBHOOK_TIMEOUT_MS');
  }
  const worker = startDeliveryWorker({
    db,
    masterKey: deps.masterKey,
    clock: deps.clock,
    log,
    lookup: deps.lookup ?? systemLookup,
    send: deps.send ?? sendHttp,
    signerOf: async (owner) => {
      const key = await deps.keyring.activeSigningKey(owner);
      return { kid: key.kid, sign: (content) => key.sign(content) };
    },
    settings: {
      scheduleMs: parseSchedule(config.HALLMARK_WEBHOOK_RETRY_SCHEDULE_MS),
      timeoutMs: config.HALLMARK_WEBHOOK_TIMEOUT_MS,
      leaseMs: config.HALLMARK_WEBHOOK_LEASE_MS,
      pollMs: config.HALLMARK_WEBHOOK_POLL_MS,
      concurrency: 16,
      // Fair delivery (docs/WEBHOOKS.md): an endpoint that never answers holds 2 slots, an account 4
      // (a quarter), whatever its backlog; the other accounts' messages go meanwhile.
      maxPerEndpoint: 2,
      maxPerAccount: 4,
      disableAfterMs: config.HALLMARK_WEBHOOK_DISABLE_AFTER_MS,
      allowPrivate: config.HALLMARK_WEBHOOKS_ALLOW_PRIVATE,
    },
  });
  const wake = () => worker.wake();
  const endpoints = createWebhookEndpoints({
    db,
    masterKey: deps.masterKey,
    clock: deps.clock,
    rotationGraceMs: config.HALLMARK_WEBHOOK_SECRET_GRACE_MS,
    wake,
  });
  const projection = projectEventsToOutbox(deps.eventStore, db, log, wake);
  const checkMs = config.HALLMARK_WEBHOOK_CHECK_MS;
  return [
    { stop: () => projection.stop() },
    await consumeScans(bus, db, wake),
    checkKeyExpiry(db, log, { intervalMs: checkMs, clock: deps.clock, onWritten: wake }),
    sweepWebhooks(db, log, { intervalMs: 3_600_000, retentionDays: config.HALLMARK_WEBHOOK_RETENTION_DAYS, clock: deps.clock }),
    await serveRpc(bus, log, createWebhookEndpointRpc, async ({ principal, body, actingKeyId }) =>
      endpoints.create(principal, body, actingKeyId),
    ),
    await serveRpc(bus, log, listWebhookEndpointsRpc, async ({ principal, query }) => endpoints.list(principal, query)),
    await serveRpc(bus, log, getWebhookEndpointRpc, async ({ principal, id, withHeldAssetEvents }) => {
      const endpoint = await endpoints.get(principal, id);
      return withHeldAssetEvents ? { ...endpoint, heldAssetEvents: await endpoints.heldAssetEvents(principal, id) } : endpoint;
    }),
    await serveRpc(bus, log, updateWebhookEndpointRpc, async ({ principal, id, body, actingKeyId }) =>
      endpoints.update(principal, id, body, actingKeyId),
    ),
    await serveRpc(bus, log, deleteWebhookEndpointRpc, async ({ principal, id }) => endpoints.remove(principal, id)),
    await serveRpc(bus, log, rotateWebhookSecretRpc, async ({ principal, id, requestKey, actingKeyId }) =>
      endpoints.rotate(principal, id, requestKey, actingKeyId),
    ),
    await serveRpc(bus, log, testWebhookEndpointRpc, async ({ principal, id }) => endpoints.test(principal, id)),
    await serveRpc(bus, log, listWebhookMessagesRpc, async ({ principal, id, query }) =>
      endpoints.messages(principal, id, query),
    ),
    await serveRpc(bus, log, listWebhookAttemptsRpc, async ({ principal, id, messageId, query }) =>
      endpoints.attempts(principal, id, messageId, query ?? {}),
    ),
    await serveRpc(bus, log, replayWebhookMessageRpc, async ({ principal, id, messageId }) =>
      endpoints.replay(principal, id, messageId),
    ),
    await serveRpc(bus, log, replayFailedWebhookMessagesRpc, async ({ principal, id, body }) =>
      endpoints.replayFailed(principal, id, body),
    ),
    await serveRpc(bus, log, recordQuotaThresholdRpc, async ({ principal, ...crossed }) => {
      const recorded = await recordQuotaThreshold(db, principal, crossed, deps.clock());
      if (recorded) wake();
      return { recorded };
    }),
    // Last, so stopping finishes the deliveries in hand after nothing new is written.
    { stop: () => worker.stop() },
  ];
}
