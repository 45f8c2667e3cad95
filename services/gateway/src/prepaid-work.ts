import type { RouteDefinition } from '@hallmark/contracts';
import type { FastifyRequest } from 'fastify';
import type { PrepaidParts } from './idempotency.ts';
import { chunkStartsOf } from './routes/batch-chunks.ts';

/**
 * Quota an earlier attempt with the request's Idempotency-Key kept for work nobody knows was done
 * (idempotency.ts, `prepaid`). A service that did not answer in time may have stored its work, so its
 * 503 keeps the quota; the retry then spends that much less, and when the work is found done or made
 * now, it was paid for once. Parts: `"0"` for a request that makes one thing (a code, an object); a
 * batch's chunks by their first item's index, with their item counts.
 */

/** What the request's earlier attempts left prepaid, in all: spent by this one no more. */
export function prepaidUnitsOf(request: FastifyRequest): number {
  const prepaid = request.idempotentAttempt?.prepaid;
  if (!prepaid) return 0;
  let units = 0;
  for (const part of Object.values(prepaid)) units += part;
  return units;
}

const dayMs = 86_400_000;

/**
 * Whether what the request's earlier attempts prepaid was spent in today's quota (daily windows end
 * at 00:00 UTC): the key's first attempt started today, so every later one did too. Only then can
 * units of it be given back; one of an earlier day's is that day's, spent.
 */
export function prepaidToday(request: FastifyRequest, now: Date): boolean {
  const since = request.idempotentAttempt?.since;
  return since !== undefined && Math.floor(since.getTime() / dayMs) === Math.floor(now.getTime() / dayMs);
}

/**
 * Refusals that prove the work an earlier attempt with the request's Idempotency-Key kept quota for
 * was not done, and never will be: decided by the request's own content (the same body was refused
 * alike then), or by a serial another code holds (the earlier attempt's insert meets it too). A
 * retry is answered the work it finds done (generate-code.ts, register-object.ts), so these come
 * only when none was found. Not GTIN_NOT_OWNED, nor a VALIDATION_ERROR by the account's metadata
 * schema (which names the schema): a claim that ended, or the tenant's own schema changed since
 * (PATCH /schemas/{id}), refuses the retry while the earlier attempt, past those checks, may still be
 * committing its work; given back, that work was free (a review of 2026-12-06: 120 codes on a tier
 * of 100 a day, by a PATCH between a timed-out attempt and its retry). Not CONFLICT: that may be the
 * earlier attempt committing the same work meanwhile (a registration's retry met its first
 * attempt's stream, and was given back the unit of an object that exists: a review of 2026-12-05).
 */
export function provesWorkUndone(refusal: { code: string; details?: unknown }): boolean {
  if (refusal.code === 'DUPLICATE_SERIAL' || refusal.code === 'INVALID_GTIN' || refusal.code === 'MISSING_REQUIRED_FIELD') {
    return true;
  }
  return refusal.code === 'VALIDATION_ERROR' && !namesSchema(refusal.details);
}

/** A refusal by a metadata schema: it names the schema (details.schemaId: metadata that does not match it), or its `schemaId` field (no such schema now). */
function namesSchema(details: unknown): boolean {
  if (typeof details !== 'object' || details === null) return false;
  const { schemaId, fields } = details as { schemaId?: unknown; fields?: unknown };
  return (
    schemaId !== undefined ||
    (Array.isArray(fields) && fields.some((field) => (field as { field?: unknown } | null)?.field === 'schemaId'))
  );
}

/**
 * A keyed request that makes one thing (a code, an object), refused after its quota was spent for
 * the request itself (provesWorkUndone): the work its earlier attempts kept quota for was not
 * done. What they kept is then given back when it was today's (request-auth.ts) and no longer kept
 * on the key (idempotency.ts). A batch settles its chunks itself (routes/code.ts); a 5xx that did
 * nothing (no service answered) knows nothing of that work.
 */
export function refusedAfterPrepaidWork(request: FastifyRequest, statusCode: number): boolean {
  const quota = request.routeOptions.config?.route?.quota;
  return (
    quota !== undefined &&
    quota.per !== 'item' &&
    request.quotaSpent !== undefined &&
    !request.mayHaveActed &&
    statusCode >= 400 &&
    statusCode < 500 &&
    request.failedWith !== undefined &&
    provesWorkUndone({ code: request.failedWith, details: request.failedWithDetails })
  );
}

/** Units an earlier attempt prepaid for the part starting at `firstIndex`; 0 when none. */
export function prepaidFor(request: FastifyRequest, firstIndex: number): number {
  return request.idempotentAttempt?.prepaid[String(firstIndex)] ?? 0;
}

/** What this attempt leaves prepaid should it fail (its answer not a 2xx); a request without a key keeps nothing. */
export function leavePrepaid(request: FastifyRequest, parts: PrepaidParts): void {
  const attempt = request.idempotentAttempt;
  if (attempt) attempt.prepaidAfter = parts;
}

/**
 * The route's one thing (a code, an object) was made by an earlier attempt with this Idempotency-Key,
 * which paid for it: this attempt keeps nothing of what it spent (nothing, when that attempt's
 * charge was left prepaid).
 */
export function madeByEarlierAttempt(request: FastifyRequest): void {
  request.refusedItems = request.quotaSpent?.cost ?? 0;
}

/**
 * Everything a keyed request has paid for once its quota is spent (what earlier attempts left
 * prepaid and what this one spent, together the whole request), by part: what a retry finds prepaid
 * if this attempt's gateway dies before its answer (idempotency.ts, notePaid).
 */
export function paidParts(request: FastifyRequest, route: RouteDefinition): PrepaidParts {
  const items = (request.body as { items?: unknown } | undefined)?.items;
  if (route.quota?.per !== 'item' || !Array.isArray(items) || items.length === 0) return { '0': 1 };
  const starts = chunkStartsOf(items);
  return Object.fromEntries(starts.map((start, chunk) => [String(start), (starts[chunk + 1] ?? items.length) - start]));
}
