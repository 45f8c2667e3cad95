import { createHmac, hkdfSync } from 'node:crypto';
import {
  assetWebhookEventTypes,
  type CreatedWebhookEndpoint,
  type CreateWebhookEndpointBody,
  decodeInstantCursor,
  encodeCursor,
  HallmarkError,
  type ListWebhookAttemptsQuery,
  type ListWebhookEndpointsQuery,
  type ListWebhookMessagesQuery,
  maxWebhookEndpoints,
  type Principal,
  type ReplayWebhookMessagesBody,
  type RotatedWebhookSecret,
  type UpdateWebhookEndpointBody,
  type WebhookAttemptList,
  type WebhookEndpointList,
  type WebhookEndpointView,
  type WebhookEventType,
  type WebhookMessageList,
  type WebhookMessageView,
} from '@hallmark/contracts';
import { open, seal, uuidV7 } from '@hallmark/crypto';
import { parseDateTime } from '@hallmark/runtime';
import type { SqlDatabase } from '@hallmark/sql';
import { enqueueMessages, messageIdOf } from './outbox.ts';
import { newWebhookSecret } from './signing.ts';
import { parseWebhookUrl, RefusedTarget } from './ssrf.ts';

/** PostgreSQL's SQLSTATE for a transaction it failed to end a deadlock. */
const deadlockDetected = '40P01';

export interface EndpointRow {
  endpoint_id: string;
  account_id: string;
  environment: 'test' | 'live';
  url: string;
  description: string;
  event_types: string[];
  status: 'enabled' | 'disabled';
  disabled_reason: string | null;
  secret_sealed: Uint8Array;
  previous_secret_sealed: Uint8Array | null;
  previous_secret_expires_at: Date | string | null;
  failing_since: Date | string | null;
  /** Failed attempts in a row (a success ends it), and until when they hold the endpoint back (migration 0006). */
  failure_streak: number;
  held_until: Date | string | null;
  created_at: Date | string;
  updated_at: Date | string;
  /** The API keys that made the endpoint and last changed it (migration 0012). */
  created_by: string | null;
  changed_by: string | null;
}

interface MessageRow {
  endpoint_id: string;
  message_id: string;
  event_type: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: Date | string | null;
  last_response_code: number | null;
  created_at: Date | string;
  delivered_at: Date | string | null;
  payload: Record<string, unknown>;
}

const iso = (value: Date | string) => new Date(value).toISOString();
const isoOrNull = (value: Date | string | null) => (value === null ? null : iso(value));
const sealContext = (endpointId: string) => `hallmark:webhook-secret:${endpointId}`;

export function viewOfEndpoint(row: EndpointRow): WebhookEndpointView {
  return {
    id: row.endpoint_id,
    url: row.url,
    description: row.description,
    eventTypes: row.event_types as WebhookEventType[],
    status: row.status,
    disabledReason: row.disabled_reason,
    failingSince: isoOrNull(row.failing_since),
    previousSecretExpiresAt: isoOrNull(row.previous_secret_expires_at),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    createdBy: row.created_by,
    changedBy: row.changed_by,
  };
}

export function viewOfMessage(row: MessageRow): WebhookMessageView {
  return {
    id: row.message_id,
    eventType: row.event_type as WebhookEventType,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.status === 'pending' ? isoOrNull(row.next_attempt_at) : null,
    lastResponseCode: row.last_response_code,
    createdAt: iso(row.created_at),
    deliveredAt: isoOrNull(row.delivered_at),
    payload: row.payload,
  };
}

/** The live secrets of an endpoint: the current one, and the one before a rotation until its grace ends. */
export function secretsOf(row: EndpointRow, masterKey: Uint8Array, now: Date): string[] {
  const secrets = [open(masterKey, row.secret_sealed, sealContext(row.endpoint_id)).toString()];
  if (row.previous_secret_sealed && row.previous_secret_expires_at && new Date(row.previous_secret_expires_at) > now) {
    secrets.push(open(masterKey, row.previous_secret_sealed, sealContext(row.endpoint_id)).toString());
  }
  return secrets;
}

function checkUrl(url: string): void {
  try {
    parseWebhookUrl(url);
  } catch (error) {
    if (error instanceof RefusedTarget) {
      throw new HallmarkError('VALIDATION_ERROR', `url: ${error.message}`, { field: 'url' });
    }
    throw error;
  }
}

export interface EndpointDeps {
  db: SqlDatabase;
  masterKey: Uint8Array;
  clock: () => Date;
  /** The grace period of a rotated secret. */
  rotationGraceMs: number;
  /** New messages are waiting: deliver now rather than at the next poll. */
  wake: () => void;
}

const notFound = () => new HallmarkError('NOT_FOUND', 'No such webhook endpoint.');

/** The secret a keyed rotation of the endpoint makes: the same for every retry of it, unguessable without the master key. */
function rotatedSecretOf(masterKey: Uint8Array, endpointId: string, requestKey: string): string {
  const key = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'hallmark:webhook-secret-rotation', 32));
  return `whsec_${createHmac('sha256', key).update(`${endpointId}:${requestKey}`).digest('base64')}`;
}

/** A date-time the contracts' check let through (every form Ajv takes), as the instant it names. */
function instantOf(value: string): Date {
  const instant = parseDateTime(value);
  if (!instant) throw new HallmarkError('VALIDATION_ERROR', `Not a date-time: ${value}`, { value });
  return instant;
}

/** The RPC handlers behind /webhooks/endpoints (docs/WEBHOOKS.md). Every query is scoped by the principal. */
export function createWebhookEndpoints(deps: EndpointDeps) {
  const { db } = deps;
  const load = async (principal: Principal, id: string): Promise<EndpointRow> => {
    const rows = await db.query<EndpointRow>(
      'SELECT * FROM webhook_endpoints WHERE endpoint_id = $1 AND account_id = $2 AND environment = $3',
      [id, principal.accountId, principal.environment],
    );
    const row = rows[0];
    if (!row) throw notFound();
    return row;
  };
  // Asked for now (a test, a replay): the endpoint's hold after a failure no longer delays its
  // messages. The failures in a row stand, so a next failure holds it as long as before.
  const releaseHold = (id: string) =>
    db.query('UPDATE webhook_endpoints SET held_until = NULL WHERE endpoint_id = $1 AND held_until IS NOT NULL', [id]);
  const loadMessage = async (principal: Principal, id: string, messageId: string): Promise<MessageRow> => {
    await load(principal, id);
    const rows = await db.query<MessageRow>('SELECT * FROM webhook_messages WHERE endpoint_id = $1 AND message_id = $2', [
      id,
      messageId,
    ]);
    if (!rows[0]) throw new HallmarkError('NOT_FOUND', 'No such message of this endpoint.');
    return rows[0];
  };

  return {
    async create(principal: Principal, body: CreateWebhookEndpointBody, actingKeyId?: string): Promise<CreatedWebhookEndpoint> {
      checkUrl(body.url);
      const id = `whep_${uuidV7().replaceAll('-', '')}`;
      const secret = newWebhookSecret();
      const now = deps.clock();
      const rows = await db.transaction(async (tx) => {
        // An owner's creations one at a time, so two at once cannot both take the last place.
        await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
          `webhook-endpoints:${principal.accountId}:${principal.environment}`,
        ]);
        const [count] = await tx.query<{ n: string | number }>(
          'SELECT count(*) AS n FROM webhook_endpoints WHERE account_id = $1 AND environment = $2',
          [principal.accountId, principal.environment],
        );
        if (Number(count?.n ?? 0) >= maxWebhookEndpoints) {
          throw new HallmarkError(
            'CONFLICT',
            `This account has ${maxWebhookEndpoints} webhook endpoints in this environment, the most it may have: delete one no longer used.`,
            { limit: maxWebhookEndpoints },
          );
        }
        return tx.query<EndpointRow>(
          `INSERT INTO webhook_endpoints (endpoint_id, account_id, environment, url, description, event_types, secret_sealed, created_at, updated_at, created_by)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9) RETURNING *`,
          [
            id,
            principal.accountId,
            principal.environment,
            body.url,
            body.description ?? '',
            body.eventTypes,
            seal(deps.masterKey, Buffer.from(secret), sealContext(id)),
            now,
            actingKeyId ?? null,
          ],
        );
      });
      return { ...viewOfEndpoint(rows[0] as EndpointRow), secret };
    },

    async list(principal: Principal, query: ListWebhookEndpointsQuery): Promise<WebhookEndpointList> {
      const limit = query.limit ?? 20;
      const after = query.cursor ? decodeInstantCursor(query.cursor, /^whep_[0-9a-f]+$/) : undefined;
      const rows = await db.query<EndpointRow>(
        `SELECT * FROM webhook_endpoints WHERE account_id = $1 AND environment = $2
           AND ($3::timestamptz IS NULL OR (created_at, endpoint_id) > ($3::timestamptz, $4::text))
           AND ($6::text IS NULL OR created_by = $6) AND ($7::text IS NULL OR changed_by = $7)
         ORDER BY created_at, endpoint_id LIMIT $5`,
        [
          principal.accountId,
          principal.environment,
          after?.[0] ?? null,
          after?.[1] ?? null,
          limit + 1,
          query.createdBy ?? null,
          query.changedBy ?? null,
        ],
      );
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      const hasMore = rows.length > limit;
      return {
        endpoints: page.map(viewOfEndpoint),
        pagination: {
          limit,
          hasMore,
          nextCursor: hasMore && last ? encodeCursor([iso(last.created_at), last.endpoint_id]) : null,
        },
      };
    },

    async get(principal: Principal, id: string): Promise<WebhookEndpointView> {
      return viewOfEndpoint(await load(principal, id));
    },

    /**
     * The asset event types (scans, reports, sales) of the messages the endpoint holds, whatever it
     * is subscribed to now: narrowed since, it still holds them, and who may read or redirect them
     * is decided by them too (the gateway's scope check; an audit over HTTP, 2026-12-07). Asked only
     * for keys without `assets:read`; each type looks for one message along the endpoint's index.
     */
    async heldAssetEvents(principal: Principal, id: string): Promise<string[]> {
      const rows = await db.query<{ event_type: string }>(
        `SELECT held.event_type FROM unnest($4::text[]) AS held(event_type)
         WHERE EXISTS (SELECT 1 FROM webhook_messages AS m
                       WHERE m.endpoint_id = $1 AND m.account_id = $2 AND m.environment = $3 AND m.event_type = held.event_type)`,
        [id, principal.accountId, principal.environment, [...assetWebhookEventTypes]],
      );
      return rows.map((row) => row.event_type);
    },

    async update(
      principal: Principal,
      id: string,
      body: UpdateWebhookEndpointBody,
      actingKeyId?: string,
    ): Promise<WebhookEndpointView> {
      await load(principal, id);
      if (body.url !== undefined) checkUrl(body.url);
      const enabled = body.enabled;
      const rows = await db.query<EndpointRow>(
        `UPDATE webhook_endpoints SET
           url = coalesce($2, url),
           event_types = coalesce($3, event_types),
           description = coalesce($4, description),
           status = CASE WHEN $5::boolean IS NULL THEN status WHEN $5 THEN 'enabled' ELSE 'disabled' END,
           disabled_reason = CASE WHEN $5::boolean IS NULL THEN disabled_reason WHEN $5 THEN NULL ELSE 'disabled' END,
           -- Enabled again, or sent elsewhere (a fixed URL): its failures so far say nothing of what comes.
           failing_since = CASE WHEN $5::boolean OR $2::text IS DISTINCT FROM NULL AND $2 <> url THEN NULL ELSE failing_since END,
           failure_streak = CASE WHEN $5::boolean OR $2::text IS DISTINCT FROM NULL AND $2 <> url THEN 0 ELSE failure_streak END,
           held_until = CASE WHEN $5::boolean OR $2::text IS DISTINCT FROM NULL AND $2 <> url THEN NULL ELSE held_until END,
           updated_at = $6,
           changed_by = $7
         WHERE endpoint_id = $1 RETURNING *`,
        [
          id,
          body.url ?? null,
          body.eventTypes ?? null,
          body.description ?? null,
          enabled ?? null,
          deps.clock(),
          actingKeyId ?? null,
        ],
      );
      // Deleted since it was loaded (a DELETE racing this change, on another replica say): gone.
      const updated = rows[0];
      if (!updated) throw notFound();
      if (enabled || body.url !== undefined) deps.wake();
      return viewOfEndpoint(updated);
    },

    async remove(principal: Principal, id: string): Promise<{ deleted: true }> {
      await load(principal, id);
      // The cascade locks the endpoint's messages after its row; a delivery worker's claim locks
      // messages, then their endpoints' rows. PostgreSQL ends such a deadlock by failing one side:
      // when it is this deletion, it runs again (a worker's failed claim is claimed again anyway).
      for (let attempt = 1; ; attempt++) {
        try {
          await db.query('DELETE FROM webhook_endpoints WHERE endpoint_id = $1', [id]);
          return { deleted: true };
        } catch (error) {
          if ((error as { code?: unknown }).code !== deadlockDetected || attempt >= 3) throw error;
        }
      }
    },

    /**
     * A new secret; the one in use stays valid for the grace period. With an Idempotency-Key
     * (`requestKey`, the gateway's scoped hash of it) the new secret is derived from it under the
     * master key, so a retry whose first answer was lost (the gateway killed before it stored the
     * answer) finds that secret in place and answers it, rotating nothing: before, it rotated again,
     * and the secret the receiver still used stopped at once.
     */
    async rotate(principal: Principal, id: string, requestKey?: string, actingKeyId?: string): Promise<RotatedWebhookSecret> {
      const row = await load(principal, id);
      const secret = requestKey ? rotatedSecretOf(deps.masterKey, row.endpoint_id, requestKey) : newWebhookSecret();
      if (requestKey && open(deps.masterKey, row.secret_sealed, sealContext(row.endpoint_id)).toString() === secret) {
        return { secret, previousSecretExpiresAt: iso(row.previous_secret_expires_at ?? deps.clock()) };
      }
      const now = deps.clock();
      const expires = new Date(now.getTime() + deps.rotationGraceMs);
      // The secret in use now stays valid for the grace period; a second rotation within it drops
      // the oldest (only two are ever sent). Only over the secret this rotation read: two runs of one
      // keyed rotation at once (a retry after a timeout, its first attempt still running) both found
      // the new secret missing, and the second made it the previous one too, dropping at once the
      // secret the receiver still used.
      const rotated = await db.query(
        `UPDATE webhook_endpoints SET previous_secret_sealed = secret_sealed, previous_secret_expires_at = $3,
           secret_sealed = $2, updated_at = $4, changed_by = $6 WHERE endpoint_id = $1 AND secret_sealed = $5 RETURNING endpoint_id`,
        [
          row.endpoint_id,
          seal(deps.masterKey, Buffer.from(secret), sealContext(row.endpoint_id)),
          expires,
          now,
          row.secret_sealed,
          actingKeyId ?? null,
        ],
      );
      if (rotated.length === 0) {
        // Deleted since it was loaded (no secret was stored, so none is answered), or rotated
        // meanwhile: by this very request's other run (its secret is in place: answered), or by another.
        const [current] = await db.query<EndpointRow>('SELECT * FROM webhook_endpoints WHERE endpoint_id = $1', [
          row.endpoint_id,
        ]);
        if (!current) throw notFound();
        if (requestKey && open(deps.masterKey, current.secret_sealed, sealContext(current.endpoint_id)).toString() === secret) {
          return { secret, previousSecretExpiresAt: iso(current.previous_secret_expires_at ?? now) };
        }
        throw new HallmarkError('CONFLICT', 'The secret was rotated meanwhile; rotate again to get a secret of your own.', {});
      }
      return { secret, previousSecretExpiresAt: expires.toISOString() };
    },

    async test(principal: Principal, id: string): Promise<WebhookMessageView> {
      const row = await load(principal, id);
      const cause = `test:${uuidV7()}`;
      const at = deps.clock();
      await db.transaction(async (tx) => {
        // A test goes to this endpoint whatever event types it takes.
        const n = await enqueueMessages(
          tx,
          [
            {
              accountId: principal.accountId,
              environment: principal.environment,
              type: 'test',
              cause,
              data: { endpointId: id, message: 'A test message from Hallmark.' },
              at,
            },
          ],
          { endpointId: id },
        );
        if (n === 0) throw new HallmarkError('CONFLICT', 'The endpoint is disabled; enable it to send a test.');
      });
      await releaseHold(id);
      deps.wake();
      return viewOfMessage(await loadMessage(principal, row.endpoint_id, messageIdOf(cause)));
    },

    async messages(principal: Principal, id: string, query: ListWebhookMessagesQuery): Promise<WebhookMessageList> {
      await load(principal, id);
      const limit = query.limit ?? 20;
      const after = query.cursor ? decodeInstantCursor(query.cursor, /^msg_[0-9a-f]+$/) : undefined;
      const rows = await db.query<MessageRow>(
        `SELECT * FROM webhook_messages WHERE endpoint_id = $1 AND ($2::text IS NULL OR status = $2)
           AND ($3::timestamptz IS NULL OR (created_at, message_id) < ($3::timestamptz, $4::text))
         ORDER BY created_at DESC, message_id DESC LIMIT $5`,
        [id, query.status ?? null, after?.[0] ?? null, after?.[1] ?? null, limit + 1],
      );
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      const hasMore = rows.length > limit;
      return {
        messages: page.map(viewOfMessage),
        pagination: {
          limit,
          hasMore,
          nextCursor: hasMore && last ? encodeCursor([iso(last.created_at), last.message_id]) : null,
        },
      };
    },

    /**
     * A page of a message's attempts, oldest first. Paged: replays start a message's attempts over,
     * and every replay's are kept, so one message's list has no bound (it was answered whole).
     */
    async attempts(
      principal: Principal,
      id: string,
      messageId: string,
      query: ListWebhookAttemptsQuery = {},
    ): Promise<WebhookAttemptList> {
      await loadMessage(principal, id, messageId);
      const limit = query.limit ?? 20;
      const after = query.cursor ? decodeInstantCursor(query.cursor, /^atmpt_[0-9a-f]+$/) : undefined;
      const rows = await db.query<{
        attempt_id: string;
        attempted_at: Date | string;
        status: 'succeeded' | 'failed';
        response_code: number | null;
        error: string | null;
        duration_ms: number;
      }>(
        `SELECT * FROM webhook_attempts WHERE endpoint_id = $1 AND message_id = $2
           AND ($3::timestamptz IS NULL OR (attempted_at, attempt_id) > ($3::timestamptz, $4::text))
         ORDER BY attempted_at, attempt_id LIMIT $5`,
        [id, messageId, after?.[0] ?? null, after?.[1] ?? null, limit + 1],
      );
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      const hasMore = rows.length > limit;
      return {
        pagination: {
          limit,
          hasMore,
          nextCursor: hasMore && last ? encodeCursor([iso(last.attempted_at), last.attempt_id]) : null,
        },
        attempts: page.map((row) => ({
          id: row.attempt_id,
          attemptedAt: iso(row.attempted_at),
          status: row.status,
          responseCode: row.response_code,
          error: row.error,
          durationMs: row.duration_ms,
        })),
      };
    },

    async replay(principal: Principal, id: string, messageId: string): Promise<WebhookMessageView> {
      await loadMessage(principal, id, messageId);
      const rows = await db.query<MessageRow>(
        `UPDATE webhook_messages SET status = 'pending', attempts = 0, next_attempt_at = $3, lease_token = NULL, lease_until = NULL
         WHERE endpoint_id = $1 AND message_id = $2 RETURNING *`,
        [id, messageId, deps.clock()],
      );
      await releaseHold(id);
      deps.wake();
      return viewOfMessage(rows[0] as MessageRow);
    },

    async replayFailed(principal: Principal, id: string, body: ReplayWebhookMessagesBody): Promise<{ replayed: number }> {
      await load(principal, id);
      const now = deps.clock();
      const rows = await db.query<{ n: string | number }>(
        `WITH replayed AS (
           UPDATE webhook_messages SET status = 'pending', attempts = 0, next_attempt_at = $4, lease_token = NULL, lease_until = NULL
           WHERE endpoint_id = $1 AND status = 'failed' AND created_at >= $2 AND created_at < $3 RETURNING 1)
         SELECT count(*) AS n FROM replayed`,
        [id, instantOf(body.since), body.until ? instantOf(body.until) : now, now],
      );
      await releaseHold(id);
      deps.wake();
      return { replayed: Number(rows[0]?.n ?? 0) };
    },
  };
}
export type WebhookEndpoints = ReturnType<typeof createWebhookEndpoints>;
