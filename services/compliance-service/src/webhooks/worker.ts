import type { Principal } from '@hallmark/contracts';
import { uuidV7 } from '@hallmark/crypto';
import type { Logger } from '@hallmark/runtime';
import { queryAfterLock, type SqlDatabase, type SqlExecutor } from '@hallmark/sql';
import { type EndpointRow, secretsOf } from './endpoints.ts';
import { deliverOnce, type Send } from './http-sender.ts';
import { enqueueMessages } from './outbox.ts';
import { endpointHoldMs, longestWaitMs, nextDelayMs } from './schedule.ts';
import { type WebhookSigner, webhookHeaders } from './signing.ts';
import { type Lookup, RefusedTarget } from './ssrf.ts';

export interface DeliverySettings {
  /** Delays after the 1st, 2nd, … failed attempt; past the last the message fails. */
  scheduleMs: readonly number[];
  timeoutMs: number;
  /** How long a claimed message is this worker's; past it (a dead worker) another takes it. */
  leaseMs: number;
  pollMs: number;
  /** Messages delivered at once by one worker. */
  concurrency: number;
  /** Deliveries in flight at once to one endpoint, on all workers together. */
  maxPerEndpoint: number;
  /**
   * Deliveries in flight at once for one account (both environments), on all workers together;
   * never more than a quarter of `concurrency`, so one account's backlog leaves most slots to others.
   */
  maxPerAccount: number;
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
 * the lease token, so a stale attempt (its lease cleared by a replay or taken over, or its endpoint
 * deleted) changes nothing but its attempt's record: not the message, not the endpoint's failures.
 */
export function startDeliveryWorker(deps: DeliveryDeps) {
  const { db, settings, log } = deps;
  let stopped = false;
  let wakeUp: (() => void) | undefined;
  let woken = false;

  const perAccount = Math.max(1, Math.min(settings.maxPerAccount, Math.floor(settings.concurrency / 4)));
  const perEndpoint = Math.max(1, Math.min(settings.maxPerEndpoint, perAccount));

  /**
   * Claims up to `limit` due messages, fairly: oldest due first, but at most `perEndpoint` in flight
   * per endpoint and `perAccount` per account, counted over every worker, and nothing of an endpoint
   * held back after a failure (`held_until`). So an account whose endpoint never answers holds a few
   * slots, never all of them, and another account's message waits for none of its backlog.
   *
   * In flight means a connection that may still be open: a row of webhook_deliveries_in_flight
   * (written here, removed when the attempt ends, ignored past its lease), never the message's
   * lease, which a replay clears and an endpoint's deletion removes while the attempt still runs.
   * This worker's own deliveries (`local`) count too, whatever the table says: a floor that holds
   * even should their rows be gone (a lease that lapsed on a stalled process). Claims run one at a
   * time (an advisory lock for the claim's transaction, a few milliseconds), so replicas claiming
   * at once cannot both take the last place of an endpoint or account.
   */
  const claim = async (limit: number, local: readonly ClaimedRow[]): Promise<ClaimedRow[]> => {
    const now = deps.clock();
    // Nothing due (every poll of a product without endpoints, or whose messages all wait for a retry):
    // the claim's statement, whose planning alone took ~5 ms of PGlite's one thread 3 times a second
    // in an idle embedded product, is not run. Read along webhook_messages_due.
    const due = await db.query(`SELECT 1 FROM webhook_messages WHERE status = 'pending' AND next_attempt_at <= $1 LIMIT 1`, [
      now,
    ]);
    if (due.length === 0) return [];
    const token = uuidV7();
    return queryAfterLock<ClaimedRow>(
      db,
      { text: `SELECT pg_advisory_xact_lock(hashtextextended('hallmark:webhook-claim', 0))`, params: [] },
      {
        text: `WITH expired AS (DELETE FROM webhook_deliveries_in_flight WHERE lease_until < $1),
         in_flight AS (
           SELECT 'shared' AS seen, endpoint_id, account_id FROM webhook_deliveries_in_flight WHERE lease_until >= $1
           UNION ALL
           SELECT 'local', endpoint_id, account_id FROM unnest($7::text[], $8::text[]) AS l(endpoint_id, account_id)),
         -- This worker's deliveries are in the table too: the larger of the two counts, not their sum.
         busy_endpoints AS (
           SELECT endpoint_id, greatest(count(*) FILTER (WHERE seen = 'shared'), count(*) FILTER (WHERE seen = 'local'))::int AS n
             FROM in_flight GROUP BY endpoint_id),
         busy_accounts AS (
           SELECT account_id, greatest(count(*) FILTER (WHERE seen = 'shared'), count(*) FILTER (WHERE seen = 'local'))::int AS n
             FROM in_flight GROUP BY account_id),
         ready AS (
           SELECT e.endpoint_id, coalesce(be.n, 0) AS in_flight, $5::int - coalesce(be.n, 0) AS room, e.last_claimed_at
             FROM webhook_endpoints e
             LEFT JOIN busy_endpoints be USING (endpoint_id)
             LEFT JOIN busy_accounts ba USING (account_id)
            WHERE e.status = 'enabled' AND (e.held_until IS NULL OR e.held_until <= $1)
              AND coalesce(be.n, 0) < $5::int AND coalesce(ba.n, 0) < $6::int),
         -- An endpoint's forged links' scan.counterfeit messages (deferred) go after its others (last =
         -- true): anyone can cause them by the thousand, and a brand's other alerts, a blocklisted
         -- clone's scan.counterfeit among them, must not wait behind them. Each kind is read in due
         -- order through its own index (compliance migrations 0008, 0013).
         -- Never one this worker is sending under its lease still ($7, $9, $10): the lease looks lapsed
         -- only because the clock stepped forward or the process stalled, and sending it again would
         -- deliver it twice (a replay clears the lease: that one goes again, as asked).
         candidates AS (
           SELECT c.*, r.in_flight, r.last_claimed_at FROM ready r CROSS JOIN LATERAL (
             SELECT * FROM (
               (SELECT m.endpoint_id, m.message_id, m.account_id, m.next_attempt_at, false AS last FROM webhook_messages m
                 WHERE m.endpoint_id = r.endpoint_id AND m.status = 'pending' AND NOT m.deferred
                   AND m.next_attempt_at <= $1 AND (m.lease_until IS NULL OR m.lease_until < $1)
                   AND NOT EXISTS (SELECT 1 FROM unnest($7::text[], $9::text[], $10::text[]) AS l(endpoint_id, message_id, lease_token)
                                    WHERE l.endpoint_id = m.endpoint_id AND l.message_id = m.message_id AND l.lease_token = m.lease_token)
                 ORDER BY m.next_attempt_at LIMIT r.room)
               UNION ALL
               (SELECT m.endpoint_id, m.message_id, m.account_id, m.next_attempt_at, true FROM webhook_messages m
                 WHERE m.endpoint_id = r.endpoint_id AND m.status = 'pending' AND m.deferred
                   AND m.next_attempt_at <= $1 AND (m.lease_until IS NULL OR m.lease_until < $1)
                   AND NOT EXISTS (SELECT 1 FROM unnest($7::text[], $9::text[], $10::text[]) AS l(endpoint_id, message_id, lease_token)
                                    WHERE l.endpoint_id = m.endpoint_id AND l.message_id = m.message_id AND l.lease_token = m.lease_token)
                 ORDER BY m.next_attempt_at LIMIT r.room)) both_kinds
             ORDER BY last, next_attempt_at LIMIT r.room) c),
         -- Within an account, a forged link's scan.counterfeit (deferred) after every other message, as
         -- within an endpoint; then the endpoint with the fewest in flight (its next message ranks by how
         -- many the endpoint would then have), and among those the one given a place longest ago; then
         -- due order. A slow receiver with a backlog, or a leaked key's test endpoints and pings, cannot
         -- take every place of the account while its other endpoints' alerts wait: ordered by due time
         -- alone, endpoints answering 2xx slowly took each freed place with their older messages, and
         -- the brand's own endpoint waited behind their whole backlog.
         by_endpoint AS (
           SELECT c.*, row_number() OVER (PARTITION BY c.endpoint_id ORDER BY c.last, c.next_attempt_at, c.message_id)
                       + c.in_flight AS endpoint_place
             FROM candidates c),
         ranked AS (
           SELECT b.*, row_number() OVER (PARTITION BY b.account_id
                                          ORDER BY b.last, b.endpoint_place, b.last_claimed_at NULLS FIRST,
                                                   b.next_attempt_at, b.endpoint_id, b.message_id) AS place
             FROM by_endpoint b),
         -- Across accounts, the fewest in flight first (an account's next message ranks by how many it
         -- would then have), then due order: an account with nothing in flight takes the next free
         -- slot, however old other accounts' backlogs are. Ordered by (last, due) alone, four accounts
         -- with slow receivers and a steady backlog held every slot, and another account's alert
         -- waited until they stopped (its scan.counterfeit behind every account's other messages).
         picked AS (
           SELECT r.endpoint_id, r.message_id FROM ranked r LEFT JOIN busy_accounts ba USING (account_id)
            WHERE r.place <= $6::int - coalesce(ba.n, 0)
            ORDER BY coalesce(ba.n, 0) + r.place, r.last, r.next_attempt_at LIMIT $2),
         due AS (
           SELECT m.endpoint_id, m.message_id FROM webhook_messages m JOIN picked p USING (endpoint_id, message_id)
            WHERE m.status = 'pending' AND (m.lease_until IS NULL OR m.lease_until < $1)
            FOR UPDATE OF m SKIP LOCKED),
         claimed AS (
           UPDATE webhook_messages m SET lease_token = $3, lease_until = $4
             FROM due WHERE m.endpoint_id = due.endpoint_id AND m.message_id = due.message_id
           RETURNING m.endpoint_id, m.message_id, m.account_id, m.environment, m.payload, m.attempts, m.lease_token),
         counted AS (
           INSERT INTO webhook_deliveries_in_flight (lease_token, endpoint_id, message_id, account_id, lease_until)
           SELECT lease_token, endpoint_id, message_id, account_id, $4 FROM claimed),
         served AS (
           UPDATE webhook_endpoints SET last_claimed_at = $1 WHERE endpoint_id IN (SELECT endpoint_id FROM claimed))
         SELECT * FROM claimed`,
        params: [
          now,
          limit,
          token,
          new Date(now.getTime() + settings.leaseMs),
          perEndpoint,
          perAccount,
          local.map((row) => row.endpoint_id),
          local.map((row) => row.account_id),
          local.map((row) => row.message_id),
          local.map((row) => row.lease_token),
        ],
      },
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

  /**
   * The attempt has ended (its connection closed), whatever became of its outcome: it no longer
   * takes its endpoint's and account's place. Never rejects: a row left behind counts only until its
   * lease passes.
   */
  const release = (row: ClaimedRow) =>
    db
      .query('DELETE FROM webhook_deliveries_in_flight WHERE lease_token = $1 AND endpoint_id = $2 AND message_id = $3', [
        row.lease_token,
        row.endpoint_id,
        row.message_id,
      ])
      .catch((error: unknown) =>
        log.warn({ err: error, messageId: row.message_id }, 'webhook delivery not released; counted until its lease ends'),
      );

  const deliver = async (row: ClaimedRow) => {
    try {
      await attempt(row);
    } finally {
      await release(row);
    }
  };

  const attempt = async (row: ClaimedRow) => {
    const endpoints = await db.query<EndpointRow>('SELECT * FROM webhook_endpoints WHERE endpoint_id = $1', [row.endpoint_id]);
    const endpoint = endpoints[0];
    // Disabled (or deleted) since the claim: the message stays pending, unsent. A disable answered
    // between the claim and this read let the request go out after its 200 (a review of 2026-12-05).
    if (endpoint?.status !== 'enabled') return;
    const started = deps.clock();
    const body = JSON.stringify(row.payload);
    let status: number | undefined;
    let retryAfter: number | undefined;
    let error: string | undefined;
    try {
      const headers = await webhookHeaders({
        id: row.message_id,
        timestamp: Math.floor(Date.now() / 1000),
        body,
        secrets: secretsOf(endpoint, deps.masterKey, started),
        signer: await deps.signerOf({ accountId: row.account_id, environment: row.environment }),
      });
      // The lookup and the exchange under one deadline: a nameserver that never answers ends the
      // attempt at the timeout, well within the lease.
      const result = await deliverOnce(endpoint.url, headers, body, {
        allowPrivate: settings.allowPrivate,
        lookup: deps.lookup,
        send: deps.send,
        timeoutMs: settings.timeoutMs,
      });
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
      // The endpoint, then its message, locked in the order its deletion takes them (the endpoint's
      // row, then its messages by the cascade), so the deletion waits for this outcome or this
      // outcome for the deletion. The message alone first, then the endpoint's row for its failure
      // streak, deadlocked with a deletion between the two (CI, 2026-12-06: the DELETE answered 500).
      const [endpointLocked] = await tx.query('SELECT 1 FROM webhook_endpoints WHERE endpoint_id = $1 FOR NO KEY UPDATE', [
        row.endpoint_id,
      ]);
      if (!endpointLocked) return; // the endpoint was deleted meanwhile, its messages and attempts with it
      const [current] = await tx.query<{ lease_token: string | null }>(
        'SELECT lease_token FROM webhook_messages WHERE endpoint_id = $1 AND message_id = $2 FOR UPDATE',
        [row.endpoint_id, row.message_id],
      );
      if (!current) return; // the endpoint was deleted meanwhile, its messages and attempts with it
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
      // Stale: the message was replayed (and perhaps claimed again) while this attempt ran. The
      // attempt stays on record; the message's schedule and the endpoint's failure streak, hold and
      // disabling are left to the message's current attempt, else replaying one message at a dead
      // endpoint would count a failure for each replay.
      if (current.lease_token !== row.lease_token) return;
      if (succeeded) {
        await tx.query(
          `UPDATE webhook_messages SET status = 'delivered', attempts = $3, delivered_at = $4, last_response_code = $5,
             lease_token = NULL, lease_until = NULL WHERE endpoint_id = $1 AND message_id = $2 AND lease_token = $6`,
          [row.endpoint_id, row.message_id, attempts, now, status, row.lease_token],
        );
        await tx.query(
          `UPDATE webhook_endpoints SET failing_since = NULL, failure_streak = 0, held_until = NULL
            WHERE endpoint_id = $1 AND (failing_since IS NOT NULL OR failure_streak > 0 OR held_until IS NOT NULL)`,
          [row.endpoint_id],
        );
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
      // The endpoint's other messages wait for its backoff rather than each taking a slot for
      // another timeout: the schedule's step for its failures in a row (at least any Retry-After).
      // A failure while the endpoint is held already was an attempt in flight with the one that set the
      // hold: the same failure in a row, not another (else two at once would skip a step of the schedule).
      // Since when it has been failing is taken as its row says now (locked until this commits), not as
      // it was read when the attempt started: an attempt that succeeded meanwhile ended the failing
      // spell, and this failure starts a new one rather than disabling an endpoint that works.
      const [streak] = await tx.query<{ failure_streak: number; failing_since: Date | string }>(
        `UPDATE webhook_endpoints
            SET failure_streak = failure_streak + CASE WHEN held_until IS NOT NULL AND held_until > $2 THEN 0 ELSE 1 END,
                failing_since = coalesce(failing_since, $2)
          WHERE endpoint_id = $1 RETURNING failure_streak, failing_since`,
        [row.endpoint_id, now],
      );
      const failingSince = streak ? new Date(streak.failing_since) : now;
      const hold = endpointHoldMs(settings.scheduleMs, Number(streak?.failure_streak ?? 1), retryAfter);
      if (hold !== undefined && hold > 0) {
        await tx.query(`UPDATE webhook_endpoints SET held_until = greatest(held_until, $2) WHERE endpoint_id = $1`, [
          row.endpoint_id,
          new Date(now.getTime() + hold),
        ]);
      }
      if (status === 410) await disable(tx, { ...endpoint, failing_since: failingSince }, 'gone', now);
      else if (now.getTime() - failingSince.getTime() >= settings.disableAfterMs) {
        await disable(tx, { ...endpoint, failing_since: failingSince }, 'failing', now);
      }
    });
  };

  /**
   * A retry is due at an instant (`next_attempt_at`, an endpoint's `held_until`): the failure's time
   * plus its wait. When the clock steps back those instants stay where they were and would hold for
   * the step's length more (a 6 h step: 6 h without a delivery to the endpoint). So a step back this
   * worker sees (its clock more than 5 s behind the latest it read) moves every future instant back
   * by the step: a 5 s retry stays 5 s away. A step it did not see (it ran after one) is caught once a
   * minute: no wait is longer than longestWaitMs, so an instant further ahead is due now. Both are
   * index ranges over the pending rows, empty but after a step.
   */
  let latestSeenMs = Number.NEGATIVE_INFINITY;
  let lastFarCheckMs = Number.NEGATIVE_INFINITY;
  const followClockStepsBack = async () => {
    const now = deps.clock();
    const stepMs = latestSeenMs - now.getTime();
    latestSeenMs = Math.max(latestSeenMs, now.getTime());
    const seen = stepMs > 5_000;
    const farCheck = performance.now() - lastFarCheckMs >= 60_000;
    if (!seen && !farCheck) return;
    if (farCheck) lastFarCheckMs = performance.now();
    if (seen) latestSeenMs = now.getTime();
    // Seen: every instant after now moves back by the step (never to before now); else only those
    // beyond any wait, to now.
    const from = seen ? now : new Date(now.getTime() + longestWaitMs(settings.scheduleMs) + 60_000);
    const parameters = seen ? [now, from, stepMs] : [now, from];
    const moved = (column: string) =>
      seen ? `greatest($1::timestamptz, ${column} - $3::float8 * interval '1 millisecond')` : '$1::timestamptz';
    const messages = await db.query<{ message_id: string }>(
      `UPDATE webhook_messages SET next_attempt_at = ${moved('next_attempt_at')}
        WHERE status = 'pending' AND next_attempt_at > $2 RETURNING message_id`,
      parameters,
    );
    const endpoints = await db.query<{ endpoint_id: string }>(
      `UPDATE webhook_endpoints SET held_until = ${moved('held_until')} WHERE held_until > $2 RETURNING endpoint_id`,
      parameters,
    );
    if (messages.length > 0 || endpoints.length > 0)
      log.warn(
        { stepBackMs: seen ? stepMs : undefined, messages: messages.length, endpoints: endpoints.length },
        'the clock stepped back: webhook retries and holds moved back with it',
      );
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
  // endpoint (up to the timeout) holds one slot, not the others. The slots hold their rows: the
  // claim counts them per endpoint and account.
  const inFlight = new Map<Promise<void>, ClaimedRow>();
  const loop = (async () => {
    while (!stopped) {
      const free = settings.concurrency - inFlight.size;
      let claimed: ClaimedRow[] = [];
      if (free > 0) {
        try {
          await followClockStepsBack();
          claimed = await claim(free, [...inFlight.values()]);
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
        inFlight.set(running, row);
      }
      // A full claim may have left more due: look again at once; else wait for a wake or the poll.
      if (claimed.length === 0 || claimed.length < free) await idle();
    }
    await Promise.all(inFlight.keys());
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
