import type { Bus, Subscription } from '@hallmark/bus';
import type { Environment } from '@hallmark/contracts';
import { createSqlProjection, type EventStore, type StoredEvent } from '@hallmark/event-store';
import { chainedRecordOf } from '@hallmark/provenance';
import type { Logger } from '@hallmark/runtime';
import type { SqlDatabase } from '@hallmark/sql';
import { enqueueMessages, type OutboxMessage } from './outbox.ts';

/** A scan as verify-service publishes it on `scans.recorded` (services/verify-service/src/scan-history.ts). */
interface PublishedScan {
  scanId: string;
  environment: Environment;
  gtin: string;
  serial: string;
  verdict: string;
  riskIndicators: string[];
  scanNumber: number;
  at: string;
  accountId?: string;
  batch?: string;
  country?: string;
  location?: { latitude: number; longitude: number };
}

const scansOf = (payload: unknown): PublishedScan[] =>
  payload && typeof payload === 'object' && 'scans' in payload
    ? (payload as { scans: PublishedScan[] }).scans
    : [payload as PublishedScan];

/** scan.suspicious and scan.counterfeit for the scans of the account's codes and GTINs. */
export function scanMessages(scans: readonly PublishedScan[]): OutboxMessage[] {
  const messages: OutboxMessage[] = [];
  for (const scan of scans) {
    if (!scan.accountId) continue;
    const type =
      scan.verdict === 'SUSPICIOUS' ? 'scan.suspicious' : scan.verdict === 'COUNTERFEIT' ? 'scan.counterfeit' : undefined;
    if (!type) continue;
    messages.push({
      accountId: scan.accountId,
      environment: scan.environment,
      type,
      cause: `scan:${scan.scanId}`,
      at: new Date(scan.at),
      // A forged link's scan (COUNTERFEIT with no risk indicator: its signature failed, risk.ts) goes
      // after the endpoint's other messages; a clone the brand blocklisted (KNOWN_COUNTERFEIT_PATTERN)
      // does not wait behind those.
      deferred: type === 'scan.counterfeit' && scan.riskIndicators.length === 0,
      data: {
        scanId: scan.scanId,
        gtin: scan.gtin,
        serial: scan.serial,
        ...(scan.batch ? { batch: scan.batch } : {}),
        verdict: scan.verdict,
        riskIndicators: scan.riskIndicators,
        scanNumber: scan.scanNumber,
        scannedAt: scan.at,
        ...(scan.country ? { country: scan.country } : {}),
        ...(scan.location ? { location: scan.location } : {}),
      },
    });
  }
  return messages;
}

/**
 * A durable JetStream consumer of the scan events (explicit acks: a batch is acknowledged only once
 * its messages are in the outbox, so a crash in between redelivers it, and the messages' ids, made
 * from the scan ids, write each once).
 */
export function consumeScans(bus: Bus, db: SqlDatabase, onWritten: () => void): Promise<Subscription> {
  return bus.consumeEvents({
    durable: 'compliance-service-webhook-scans',
    subject: 'scans.recorded',
    // One event at a time (each already carries the scans of a few milliseconds): a batch handler
    // would wait for a full batch or the end of a fetch (up to 1 s), which a scan alert must not.
    async handle(event) {
      const messages = scanMessages(scansOf(event.payload));
      if (messages.length === 0) return;
      if ((await enqueueMessages(db, messages)) > 0) onWritten();
    },
  });
}

const accountStreamPattern = /^account-(.+)-(test|live)$/;

/**
 * The event types `eventMessages` makes messages of; it answers none for any other. The outbox's
 * subscription reads only these (a `code.generated` of every code would otherwise be read, parsed
 * and dropped: about 10 µs a code of the embedded form's batch generation).
 */
export const eventTypesWithMessages = [
  'code.reported',
  'code.blocked',
  'code.unblocked',
  'code.report-confirmed',
  'code.report-lifted',
  'sold',
  'transferred',
  'transfer_locked',
  'transfer_cancelled',
] as const;

/** The webhook messages an event of the store causes: transfers, filed reports, blocked and unblocked codes. */
export function eventMessages(event: StoredEvent): OutboxMessage[] {
  const record = chainedRecordOf(event);
  const data = event.data as Record<string, unknown>;
  const cause = `event:${event.eventId}`;
  const at = new Date(event.recordedAt);
  const account = accountStreamPattern.exec(event.streamId);
  // A filed report: verify-service appends it to the code owner's account stream with its row.
  if (account && event.type === 'code.reported') {
    const { reportId, assetId, gtin, serial, reason } = data;
    return [
      {
        accountId: account[1] as string,
        environment: account[2] as Environment,
        type: 'code.reported',
        cause: `report:${String(reportId)}`,
        at,
        data: { reportId, assetId, gtin, serial, reason },
      },
    ];
  }
  // A blocklist entry added or removed: verify-service appends it to the owner's account stream.
  if (account && (event.type === 'code.blocked' || event.type === 'code.unblocked')) {
    const { by: _by, ...block } = data;
    return [
      {
        accountId: account[1] as string,
        environment: account[2] as Environment,
        type: event.type,
        cause,
        at,
        data: { source: 'blocklist', ...block },
      },
    ];
  }
  if (record) {
    const owner = { accountId: record.accountId, environment: record.environment };
    if (event.type === 'sold' || event.type === 'transferred') {
      return [{ ...owner, type: 'transfer.completed', cause, at, data: { assetId: record.assetId, kind: event.type, ...data } }];
    }
    if (event.type === 'transfer_locked' || event.type === 'transfer_cancelled') {
      const type = event.type === 'transfer_locked' ? 'transfer.locked' : 'transfer.cancelled';
      return [{ ...owner, type, cause, at, data: { assetId: record.assetId, ...data } }];
    }
    if (event.type === 'code.report-confirmed' || event.type === 'code.report-lifted') {
      return [
        {
          ...owner,
          type: event.type === 'code.report-confirmed' ? 'code.blocked' : 'code.unblocked',
          cause,
          at,
          data: {
            source: 'report',
            assetId: record.assetId,
            reportId: data.reportId,
            gtin: data.gtin,
            serial: data.serial,
            reason: data.reason,
          },
        },
      ];
    }
    return [];
  }
  return [];
}

export const webhookProjectionName = 'compliance-webhooks';

/**
 * Derives webhook messages from the event store with a tracked position: the outbox rows and the
 * checkpoint commit in one transaction (createSqlProjection), so each event is turned into its
 * messages exactly once, on whichever replica holds the projection's lock.
 */
export function projectEventsToOutbox(eventStore: EventStore, db: SqlDatabase, log: Logger, onWritten: () => void) {
  const projection = createSqlProjection({
    db,
    name: webhookProjectionName,
    checkpointTable: 'webhook_checkpoints',
    project: async (tx, events) => enqueueMessages(tx, events.flatMap(eventMessages)),
    // Its one statement's count is not used here: the lock, the messages and the checkpoint go in one round trip.
    writeOnly: true,
    onProjected: onWritten,
  });
  return eventStore.subscribe({
    name: projection.name,
    checkpoints: projection.checkpoints,
    handle: projection.handle,
    onError: (error) => log.warn({ err: error }, 'webhook projection batch failed; retrying'),
    batchSize: 1_000,
    // As long as the other projections' (it was 20 ms): its types are few but it reads the whole log
    // to pass the others, ~40 times a second under a load of single generates. In bench:generate
    // (embedded, 2026-12-07) the log's reads took a quarter of PGlite's thread; with 100 ms, 385 reads
    // instead of 590 and 1.1 s less of that thread's 11.5. The first event after a quiet spell is read
    // at once (a linger follows a page, never precedes one); in a burst a message waits at most this
    // long more for its batch.
    lingerMs: 100,
    eventTypes: eventTypesWithMessages,
  });
}

/**
 * key.expiring: API keys expiring within 7 days, then within 1 day, each announced once (the
 * threshold row and the messages commit together); a key made with a day or less to live gets the
 * 1-day notice only.
 */
export function checkKeyExpiry(
  db: SqlDatabase,
  log: Logger,
  options: { intervalMs: number; clock: () => Date; onWritten: () => void },
) {
  const tick = async () => {
    const now = options.clock();
    let written = 0;
    for (const daysLeft of [7, 1] as const) {
      written += await db.transaction(async (tx) => {
        const keys = await tx.query<{
          id: string;
          account_id: string;
          environment: Environment;
          name: string;
          expires_at: Date | string;
        }>(
          `WITH due AS (
             SELECT id, account_id, environment, name, expires_at FROM api_keys
              WHERE revoked_at IS NULL AND expires_at > $1 AND expires_at <= $1 + make_interval(days => $2::int)
                -- A key with a day or less left gets the 1-day notice alone, not a 7 beside it.
                AND ($2::int = 1 OR expires_at > $1 + interval '1 day')),
           recorded AS (
             INSERT INTO webhook_thresholds (account_id, environment, threshold, recorded_at)
             SELECT account_id, environment, 'key.expiring:' || id || ':' || $2::int, $1 FROM due
             ON CONFLICT DO NOTHING RETURNING threshold)
           SELECT due.* FROM due JOIN recorded ON recorded.threshold = 'key.expiring:' || due.id || ':' || $2::int`,
          [now, daysLeft],
        );
        return enqueueMessages(
          tx,
          keys.map((key) => ({
            accountId: key.account_id,
            environment: key.environment,
            type: 'key.expiring' as const,
            cause: `key.expiring:${key.id}:${daysLeft}`,
            at: now,
            data: { keyId: key.id, name: key.name, expiresAt: new Date(key.expires_at).toISOString(), daysLeft },
          })),
        );
      });
    }
    if (written > 0) options.onWritten();
  };
  return every(options.intervalMs, tick, (error) => log.warn({ err: error }, 'key expiry check failed'));
}

/**
 * quota.threshold: a daily quota crossed 80% or 100%. Recorded once per account, environment,
 * quota, threshold and UTC day (the threshold row and the messages commit together); true when this
 * call recorded it.
 */
export async function recordQuotaThreshold(
  db: SqlDatabase,
  principal: { accountId: string; environment: Environment },
  crossed: { quota: string; threshold: 80 | 100; used: number; limit: number; day: string },
  now: Date,
): Promise<boolean> {
  const threshold = `quota:${crossed.quota}:${crossed.day}:${crossed.threshold}`;
  return db.transaction(async (tx) => {
    const recorded = await tx.query(
      `INSERT INTO webhook_thresholds (account_id, environment, threshold, recorded_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT DO NOTHING RETURNING threshold`,
      [principal.accountId, principal.environment, threshold, now],
    );
    if (recorded.length === 0) return false;
    await enqueueMessages(tx, [
      {
        ...principal,
        type: 'quota.threshold',
        cause: threshold + `:${principal.accountId}:${principal.environment}`,
        at: now,
        data: crossed,
      },
    ]);
    return true;
  });
}

/**
 * Deletes delivered and failed messages (their attempts go with them) older than the retention, and
 * announced thresholds no check can meet again, a few thousand rows a statement.
 */
export function sweepWebhooks(
  db: SqlDatabase,
  log: Logger,
  options: { intervalMs: number; retentionDays: number; clock: () => Date },
) {
  const tick = async () => {
    const before = new Date(options.clock().getTime() - options.retentionDays * 86_400_000);
    for (;;) {
      const deleted = await db.query(
        `DELETE FROM webhook_messages WHERE (endpoint_id, message_id) IN (
           SELECT endpoint_id, message_id FROM webhook_messages
            WHERE status <> 'pending' AND created_at < $1 LIMIT 5000) RETURNING 1`,
        [before],
      );
      if (deleted.length < 5000) break;
    }
    await db.query(`DELETE FROM webhook_thresholds WHERE recorded_at < $1`, [
      new Date(Math.min(before.getTime(), options.clock().getTime() - 40 * 86_400_000)),
    ]);
  };
  return every(options.intervalMs, tick, (error) => log.warn({ err: error }, 'webhook sweep failed'));
}

function every(intervalMs: number, tick: () => Promise<void>, onError: (error: unknown) => void): Subscription {
  let running: Promise<void> | undefined;
  const run = () => {
    running ??= tick()
      .catch(onError)
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(run, intervalMs);
  run();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
