import type { Principal } from '@hallmark/contracts';
import { uuidV7 } from '@hallmark/crypto';
import type { Logger } from '@hallmark/runtime';
import type { SqlDatabase, SqlExecutor } from '@hallmark/sql';
import { type EndpointRow, secretsOf } from './endpoints.ts';
import type { Send } from './http-sender.ts';
import { enqueueMessages } from './outbox.ts';
import { nextDelayMs } from './schedule.ts';
import { type WebhookSigner, webhookHeaders } from './signing.ts';
import { type Lookup, RefusedTarget, resolveTarget } from './ssrf.ts';

export interface DeliverySettings {
  /** Delays after the 1st, 2nd, … failed attempt; past the last the message fails. */
  scheduleMs: readonly number[];
  timeoutMs: number;
  /** How long a claimed message is this worker's; past it (a dead worker) another takes it. */
  leaseMs: number;
  pollMs: number;
  /** Messages delivered at once by one worker. */
  concurrency: number;
  /** An endpoint failing this long (every attempt since) is disabled. */
  disableAfterMs: number;
  allowPrivate: boolean;
}

export interface DeliveryDeps {
  db: SqlDatabase;
  masterKey: Uint8Array;
  clock: () => Date;
  log: Logger;
  settings: DeliverySettings;
  /** The account's Ed25519 signing key, for `v1a`. */
  signerOf(owner: Principal): Promise<WebhookSigner>;
  lookup: Lookup;
  send: Send;
}

interface ClaimedRow {
  endpoint_id: string;
  message_id: string;
  account_id: string;
  environment: 'test' | 'live';
  payload: Record<string, unknown>;
  attempts: number;
  lease_token: string;
}

/**
 * The delivery worker. Any number run (one per compliance-service replica): each claims due
 * messages with `FOR UPDATE SKIP LOCKED` and a lease, so replicas never take the same message while
 * its lease holds, and a worker that dies mid-delivery leaves it to be taken again when the lease
 * lapses (at-least-once; the receiver de-duplicates by webhook-id). Outcomes are written guarded by
 * the lease token, so a worker whose lease was taken over changes nothing but its attempt's record.
 */
export function startDeliveryWorker(deps: DeliveryDeps) {
  const { db, settings, log } = deps;
  let stopped = false;
  let wakeUp: (() => void) | undefined;
  let woken = false;

  const claim = async (limit: number): Promise<ClaimedRow[]> => {
    const now = deps.clock();
    const token = uuidV7();
    return db.query<ClaimedRow>(
      `WITH due AS (
         SELECT m.endpoint_id, m.message_id FROM webhook_messages m JOIN webhook_endpoints e USING (endpoint_id)
          WHERE m.status = 'pending' AND m.next_attempt_at <= $1 AND (m.lease_until IS NULL OR m.lease_until < $1)
            AND e.status = 'enabled'
          ORDER BY m.next_attempt_at LIMIT $2
          FOR UPDATE OF m SKIP LOCKED)
       UPDATE webhook_messages m SET lease_token = $3, lease_until = $4
         FROM due WHERE m.endpoint_id = due.endpoint_id AND m.message_id = due.message_id
       RETURNING m.endpoint_id, m.message_id, m.account_id, m.environment, m.payload, m.attempts, m.lease_token`,
      [now, limit, token, new Date(now.getTime() + settings.leaseMs)],
    );
  };

  const disable = async (tx: SqlExecutor, endpoint: EndpointRow, reason: 'gone' | 'failing', now: Date) => {
    const changed = await tx.query(
      `UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = $2, updated_at = $3
        WHERE endpoint_id = $1 AND status = 'enabled' RETURNING endpoint_id`,
      [endpoint.endpoint_id, reason, now],
    );
    if (changed.length === 0) return;
    log.warn({ endpointId: endpoint.endpoint_id, reason }, 'webhook endpoint disabled');
    // The owner hears of it on its other endpoints that take endpoint.disabled.
    await enqueueMessages(tx, [
      {
        accountId: endpoint.account_id,
        environment: endpoint.environment,
        type: 'endpoint.disabled',
        cause: `endpoint.disabled:${endpoint.endpoint_id}:${now.toISOString()}`,
        data: {
          endpointId: endpoint.endpoint_id,
          url: endpoint.url,
          reason,
          failingSince: endpoint.failing_since ? new Date(endpoint.failing_since).toISOString() : null,
        },
        at: now,
      },
    ]);
  };

  const deliver = async (row: ClaimedRow) => {
    const endpoints = await db.query<EndpointRow>('SELECT * FROM webhook_endpoints WHERE endpoint_id = $1', [row.endpoint_id]);
    const endpoint = endpoints[0];
    if (!endpoint) return;
    const started = deps.clock();
    const body = JSON.stringify(row.payload);
    let status: number | undefined;
    let retryAfter: number | undefined;
    let error: string | undefined;
    try {
      const target = await resolveTarget(endpoint.url, { allowPrivate: settings.allowPrivate, lookup: deps.lookup });
      const headers = await webhookHeaders({
        id: row.message_id,
        timestamp: Math.floor(Date.now() / 1000),
        body,
        secrets: secretsOf(endpoint, deps.masterKey, started),
        signer: await deps.signerOf({ accountId: row.account_id, environment: row.environment }),
      });
      const result = await deps.send(target, headers, body, settings.timeoutMs);
      status = result.status;
      retryAfter = result.retryAfterSeconds;
      error = result.error ?? (status !== undefined && (status < 200 || status > 299) ? `HTTP ${status}` : undefined);
    } catch (caught) {
      error = caught instanceof RefusedTarget ? `refused: ${caught.message}` : String((caught as Error).message ?? caught);
      if (caught instanceof RefusedTarget)
        log.info({ endpointId: row.endpoint_id, detail: caught.detail }, 'webhook delivery refused');
      else log.warn({ err: caught, endpointId: row.endpoint_id }, 'webhook delivery failed');
    }
    const now = deps.clock();
    const succeeded = status !== undefined && status >= 200 && status <= 299;
    const attempts = row.attempts + 1;
    await db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO webhook_attempts (attempt_id, endpoint_id, message_id, attempted_at, status, response_code, error, duration_ms)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [
          `atmpt_${uuidV7().replaceAll('-', '')}`,
          row.endpoint_id,
          row.message_id,
          started,
          succeeded ? 'succeeded' : 'failed',
          status ?? null,
          error?.slice(0, 500) ?? null,
          now.getTime() - started.getTime(),
        ],
      );
      if (succeeded) {
        await tx.query(
          `UPDATE webhook_messages SET status = 'delivered', attempts = $3, delivered_at = $4, last_response_code = $5,
             lease_token = NULL, lease_until = NULL WHERE endpoint_id = $1 AND message_id = $2 AND lease_token = $6`,
          [row.endpoint_id, row.message_id, attempts, now, status, row.lease_token],
        );
        await tx.query('UPDATE webhook_endpoints SET failing_since = NULL WHERE endpoint_id = $1 AND failing_since IS NOT NULL', [
          row.endpoint_id,
        ]);
        return;
      }
      const delay = status === 410 ? undefined : nextDelayMs(settings.scheduleMs, attempts, retryAfter);
      await tx.query(
        `UPDATE webhook_messages SET status = $3, attempts = $4, next_attempt_at = $5, last_response_code = $6,
           lease_token = NULL, lease_until = NULL WHERE endpoint_id = $1 AND message_id = $2 AND lease_token = $7`,
        [
          row.endpoint_id,
          row.message_id,
          delay === undefined ? 'failed' : 'pending',
          attempts,
          delay === undefined ? null : new Date(now.getTime() + delay),
          status ?? null,
          row.lease_token,
        ],
      );
      const failingSince = endpoint.failing_since ? new Date(endpoint.failing_since) : now;
      if (!endpoint.failing_since) {
        await tx.query('UPDATE webhook_endpoints SET failing_since = $2 WHERE endpoint_id = $1 AND failing_since IS NULL', [
          row.endpoint_id,
          now,
        ]);
      }
      if (status === 410) await disable(tx, { ...endpoint, failing_since: failingSince }, 'gone', now);
      else if (now.getTime() - failingSince.getTime() >= settings.disableAfterMs) {
        await disable(tx, { ...endpoint, failing_since: failingSince }, 'failing', now);
      }
    });
  };

  const idle = () =>
    new Promise<void>((resolve) => {
      if (woken || stopped) {
        woken = false;
        resolve();
        return;
      }
      const timer = setTimeout(done, settings.pollMs);
      function done() {
        clearTimeout(timer);
        wakeUp = undefined;
        woken = false;
        resolve();
      }
      wakeUp = done;
    });

  // Up to `concurrency` deliveries at once; a slot that frees claims more at once, so one slow
  // endpoint (up to the timeout) holds one slot, not the others.
  const inFlight = new Set<Promise<void>>();
  const loop = (async () => {
    while (!stopped) {
      const free = settings.concurrency - inFlight.size;
      let claimed: ClaimedRow[] = [];
      if (free > 0) {
        try {
          claimed = await claim(free);
        } catch (error) {
          log.warn({ err: error }, 'webhook claim failed; retrying');
        }
      }
      for (const row of claimed) {
        const running: Promise<void> = deliver(row)
          .catch((error: unknown) => log.warn({ err: error, messageId: row.message_id }, 'webhook outcome not stored'))
          .finally(() => {
            inFlight.delete(running);
            woken = true;
            wakeUp?.();
          });
        inFlight.add(running);
      }
      // A full claim may have left more due: look again at once; else wait for a wake or the poll.
      if (claimed.length === 0 || claimed.length < free) await idle();
    }
    await Promise.all(inFlight);
  })();

  return {
    /** Messages were just written: look now rather than at the next poll. */
    wake() {
      woken = true;
      wakeUp?.();
    },
    async stop() {
      stopped = true;
      wakeUp?.();
      await loop;
    },
  };
}
export type DeliveryWorker = ReturnType<typeof startDeliveryWorker>;
