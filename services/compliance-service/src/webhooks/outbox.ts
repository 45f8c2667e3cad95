import { createHash } from 'node:crypto';
import type { Environment, WebhookEventType } from '@hallmark/contracts';
import type { SqlExecutor } from '@hallmark/sql';

/**
 * The webhook-id of a message made from a cause (a scan, an event, a threshold): the same cause
 * always gives the same id, so writing it twice (a redelivered scan batch, a replayed projection
 * batch) writes one message per endpoint.
 */
export function messageIdOf(cause: string): string {
  return `msg_${createHash('sha256').update(cause).digest('hex').slice(0, 32)}`;
}

export interface OutboxMessage {
  accountId: string;
  environment: Environment;
  type: WebhookEventType;
  /** What caused it, unique per cause: becomes the webhook-id. */
  cause: string;
  data: Record<string, unknown>;
  at: Date;
  /** Sent after the endpoint's other due messages: a forged link's scan.counterfeit (sources.ts). */
  deferred?: boolean;
}

/**
 * Writes messages to the outbox, one row per enabled endpoint of the account that takes the event
 * type, in the caller's transaction (so with the fact that caused them, or with the checkpoint of
 * the projection that read it). Returns how many rows were written.
 */
export async function enqueueMessages(sql: SqlExecutor, messages: readonly OutboxMessage[], only?: { endpointId: string }) {
  if (messages.length === 0) return 0;
  const rows = messages.map((message) => ({
    account_id: message.accountId,
    environment: message.environment,
    event_type: message.type,
    message_id: messageIdOf(message.cause),
    payload: { type: message.type, timestamp: message.at.toISOString(), environment: message.environment, data: message.data },
    created_at: message.at.toISOString(),
    deferred: message.deferred ?? false,
  }));
  const written = await sql.query<{ n: string | number }>(
    `WITH inserted AS (
       INSERT INTO webhook_messages (endpoint_id, message_id, account_id, environment, event_type, payload, created_at, next_attempt_at, deferred)
       SELECT e.endpoint_id, r.message_id, r.account_id, r.environment, r.event_type, r.payload, r.created_at, r.created_at, r.deferred
         FROM jsonb_to_recordset($1::jsonb)
           AS r(account_id text, environment text, event_type text, message_id text, payload jsonb, created_at timestamptz, deferred boolean)
         JOIN webhook_endpoints e
           ON e.account_id = r.account_id AND e.environment = r.environment AND e.status = 'enabled'
          AND ($2::text IS NULL AND r.event_type = ANY (e.event_types) OR e.endpoint_id = $2::text)
       ON CONFLICT (endpoint_id, message_id) DO NOTHING
       RETURNING 1)
     SELECT count(*) AS n FROM inserted`,
    [JSON.stringify(rows), only?.endpointId ?? null],
  );
  return Number(written[0]?.n ?? 0);
}
