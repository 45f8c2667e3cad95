import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes, randomUUID } from 'node:crypto';
import type { AuthenticatedKey } from '@hallmark/accounts';
import { HallmarkError, type RouteDefinition } from '@hallmark/contracts';
import type { Logger } from '@hallmark/runtime';
import type { SqlDatabase } from '@hallmark/sql';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { paidParts, refusedAfterPrepaidWork } from './prepaid-work.ts';
import { decodedPathOf } from './request-target.ts';

/**
 * `Idempotency-Key` on every route that creates something (RouteDefinition.idempotent), for all
 * services at once (docs/API.md, Idempotency-Key):
 * - the first request with a key claims it (a row in `idempotent_requests`, shared by every gateway
 *   replica) and runs; its 2xx answer is stored, and a retry of the same request gets it again with
 *   `Idempotent-Replayed: true`, spending no quota (this runs before the limits are spent);
 * - the same key with another request (method, path, body; for an upload its fields and the file's
 *   SHA-256) is 422 IDEMPOTENCY_KEY_REUSED;
 * - a retry while the first still runs is 409 CONFLICT with Retry-After, at once;
 * - a 4xx or 5xx answer releases the claim, so a retry runs again (a refusal is no result to keep,
 *   and a 503 may have been a service that was down);
 * - except for quota a failed attempt kept (a service that did not answer in time may have done the
 *   work): the row stays, its lease lapsed, with those units as `prepaid` by part of the request, and
 *   the retry that takes it over spends that much less (prepaid-work.ts);
 * - a claim is a lease, renewed while its attempt runs: one left by an attempt cut off by a crash
 *   lapses after `leaseMs` (HALLMARK_IDEMPOTENCY_LEASE_MS), and a retry then runs again.
 * Keys are kept 24 h from the first attempt, then swept.
 * A key and its answer belong to the API key that sent it (a console session: the key it signed in
 * with): another key of the account with the same Idempotency-Key has a key space of its own, and its
 * request runs on its own, with its own scopes. The answer holds secrets shown once (a new API key's
 * secret, a transfer code), so a narrower key must never be handed a stronger key's answer.
 */

declare module 'fastify' {
  interface FastifyRequest {
    /** The claim this request holds on its Idempotency-Key, until its answer is stored or released. */
    idempotentAttempt?: IdempotentAttempt | undefined;
    /**
     * Another attempt with the request's Idempotency-Key took its claim over (this one stalled past
     * its lease) after this one noted on the key what it paid: the retry spent nothing for that, so
     * nothing of it is given back, whatever this attempt's answer (request-auth.ts, onSend).
     */
    paidForTakeover?: boolean;
  }
}

/** How long a key and its answer are kept. */
export const idempotencyKeyLifetimeMs = 24 * 60 * 60 * 1000;
/** A claim is renewed for at most this long: longer than any request (a batch of 10,000 takes seconds). */
const maxLeaseRenewalMs = 15 * 60 * 1000;
/** What a retry that finds the first attempt still running is told to wait, in seconds. */
const runningRetryAfterSeconds = 1;
const sweepIntervalMs = 10 * 60 * 1000;
/** 1 to 255 printable ASCII characters (space to tilde). */
const acceptableKey = /^[\x20-\x7E]{1,255}$/;

interface KeyScope {
  accountId: string;
  environment: string;
  /** The API key that sent the request: keys never share answers, nor ids derived from them. */
  apiKeyId: string;
  operation: string;
  /** SHA-256 of the Idempotency-Key: the key itself is not kept. */
  keyHash: string;
}

/**
 * Quota units an attempt kept for work nobody knows was done, by part of the request: `"0"` for a
 * request that makes one thing, a batch's chunks by their first item's index (prepaid-work.ts).
 */
export type PrepaidParts = Readonly<Record<string, number>>;

export interface IdempotentAttempt {
  scope: KeyScope;
  token: string;
  /** Seals the stored answer; derived from the Idempotency-Key, so the database alone cannot open it. */
  sealingKey: Buffer;
  /** What earlier attempts with this key paid for and may not have had made: spent by this one no more. */
  prepaid: PrepaidParts;
  /** When the key's first attempt started: every earlier attempt, and so every prepaid unit, is from then on. */
  since: Date;
  /**
   * What this attempt leaves paid for if it fails (set by the route or request-auth's onError); `prepaid`
   * when unset, so a retry refused before its route ran (a 429, a 400) loses nothing of it.
   */
  prepaidAfter?: PrepaidParts;
  /** This attempt noted on the key what it paid (notePaid) while it held the claim. */
  paidNoted?: boolean;
  /**
   * This attempt's spend set its claim's paid marker (rate-limiter.ts, attemptPaidMarker): a retry
   * that takes the claim over before the note counts that spend as prepaid.
   */
  paidMarked?: boolean;
  /** Renews the claim's lease while the attempt runs (stopped once its answer is stored or released). */
  renewal?: NodeJS.Timeout;
}

interface StoredRow {
  request_hash: string;
  claim: string | null;
  lease_until: Date | string | null;
  status: number | null;
  content_type: string | null;
  answer: string | null;
  expires_at: Date | string;
  prepaid: PrepaidParts | string | null;
}

type ClaimOutcome =
  | {
      kind: 'claimed';
      prepaid: PrepaidParts;
      since: Date;
      /**
       * The claim taken over, when its holder noted nothing on the key (`prepaid_by` is not it): it
       * may have spent and been killed before its note, which only the counters know.
       */
      unnoted?: string;
    }
  | { kind: 'replay'; status: number; contentType: string | null; answer: string }
  | { kind: 'reused' }
  | { kind: 'running' };

export interface Idempotency {
  /**
   * For a route whose request is known only in its handler (a multipart upload: `parts` are its
   * fields and the file's SHA-256): claims the request's key before anything is created. Resolves
   * true when the handler goes on (no key, or the key is claimed), false when the stored answer was
   * sent (the handler then returns the reply). Rejects with 422 IDEMPOTENCY_KEY_REUSED or 409 CONFLICT.
   */
  admit(request: FastifyRequest, reply: FastifyReply, parts: Readonly<Record<string, string>>): Promise<boolean>;
  /**
   * Whether the request's Idempotency-Key holds a stored answer for its API key and route, which a
   * retry is then sent whatever the limits (a replay spends nothing), or quota an earlier attempt
   * paid (the retry spends that much less, so limits the earlier attempt kept do not refuse it). One
   * indexed read; false without a key, with one that is malformed, unanswered and unpaid or expired,
   * and for uploads.
   */
  hasStoredAnswerOrPrepaid(request: FastifyRequest, route: RouteDefinition): Promise<boolean>;
  /**
   * Notes on the claimed key what the attempt has paid, by part, once its quota is spent: should its
   * gateway die before the answer (nothing then runs onSend), the retry that takes the key over finds
   * it prepaid and pays nothing twice. An answer replaces it (a 2xx clears it; a failure leaves what
   * it keeps). Resolves at once for a request without a claimed key.
   */
  notePaid(request: FastifyRequest, parts: PrepaidParts): Promise<void>;
}

const sha256Hex = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');
const timeOf = (value: Date | string | null) => (value === null ? Number.NaN : new Date(value).getTime());
const hasParts = (parts: PrepaidParts | undefined): parts is PrepaidParts => parts !== undefined && Object.keys(parts).length > 0;

/** A stored `prepaid` as parts of whole positive units (jsonb comes back parsed, or as text). */
function prepaidOf(stored: StoredRow['prepaid']): PrepaidParts {
  const parsed: unknown = typeof stored === 'string' ? JSON.parse(stored) : stored;
  if (!parsed || typeof parsed !== 'object') return {};
  return Object.fromEntries(
    Object.entries(parsed).filter((entry): entry is [string, number] => Number.isSafeInteger(entry[1]) && entry[1] > 0),
  );
}

/** The request's Idempotency-Key, or undefined without one. Throws 400 for one that is not 1 to 255 printable ASCII characters. */
function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const header = request.headers['idempotency-key'];
  if (header === undefined) return undefined;
  if (typeof header !== 'string' || !acceptableKey.test(header)) {
    throw new HallmarkError(
      'VALIDATION_ERROR',
      'Invalid request: the Idempotency-Key header must be 1 to 255 printable ASCII characters.',
      {
        fields: [{ field: 'Idempotency-Key', in: 'headers', message: 'must be 1 to 255 printable ASCII characters' }],
      },
    );
  }
  return header;
}

/**
 * What makes two requests the same: method, path and query, and the body (or an upload's parts). The
 * path as the router reads it: a retry that a proxy re-encoded (`/%61pi/…`), or sent with an empty
 * query (`…/generate?`), is the same request, and gets its stored answer rather than a 422.
 */
function requestHashOf(request: FastifyRequest, parts: Readonly<Record<string, string>>): string {
  const queryAt = request.url.indexOf('?');
  const path = decodedPathOf(queryAt < 0 ? request.url : request.url.slice(0, queryAt));
  const query = queryAt < 0 ? '' : request.url.slice(queryAt + 1);
  const hash = createHash('sha256').update(`${request.method}\n${path}${query ? `?${query}` : ''}\n`);
  for (const name of Object.keys(parts).sort()) hash.update(`${JSON.stringify(name)}:${JSON.stringify(parts[name])}\n`);
  return hash.digest('hex');
}

function sealingKeyOf(key: string, scope: KeyScope): Buffer {
  const salt = `${scope.accountId}\n${scope.environment}\n${scope.apiKeyId}\n${scope.operation}`;
  return Buffer.from(hkdfSync('sha256', key, salt, 'hallmark idempotent answer', 32));
}

function seal(sealingKey: Buffer, bytes: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealingKey, iv);
  const sealed = Buffer.concat([cipher.update(bytes), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64');
}

function open(sealingKey: Buffer, stored: string): Buffer {
  const bytes = Buffer.from(stored, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', sealingKey, bytes.subarray(0, 12));
  decipher.setAuthTag(bytes.subarray(12, 28));
  return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]);
}

function scopeOf(apiKey: AuthenticatedKey, route: RouteDefinition, key: string): KeyScope {
  return {
    accountId: apiKey.accountId,
    environment: apiKey.environment,
    apiKeyId: apiKey.keyId,
    operation: route.operationId,
    keyHash: sha256Hex(key),
  };
}

const scopeParams = (scope: KeyScope) => [scope.accountId, scope.environment, scope.apiKeyId, scope.operation, scope.keyHash];
const whereScope = 'account_id = $1 AND environment = $2 AND api_key_id = $3 AND operation = $4 AND key_hash = $5';

/**
 * The store: no transaction held across statements (PGlite has one connection); every change is a
 * single statement guarded by what it expects to find, so replicas racing for a key agree.
 */
function createIdempotencyStore(db: SqlDatabase) {
  return {
    async claim(scope: KeyScope, requestHash: string, token: string, now: Date, leaseMs: number): Promise<ClaimOutcome> {
      const leaseUntil = new Date(now.getTime() + leaseMs);
      // A few rounds at most: a row can vanish (released, expired) between the insert and the read.
      for (let round = 0; round < 3; round++) {
        const inserted = await db.query(
          `INSERT INTO idempotent_requests
             (account_id, environment, api_key_id, operation, key_hash, request_hash, claim, lease_until, created_at, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING RETURNING claim`,
          [...scopeParams(scope), requestHash, token, leaseUntil, now, new Date(now.getTime() + idempotencyKeyLifetimeMs)],
        );
        if (inserted.length === 1) return { kind: 'claimed', prepaid: {}, since: now };
        const [row] = await db.query<StoredRow>(
          `SELECT request_hash, claim, lease_until, status, content_type, answer, expires_at, prepaid
           FROM idempotent_requests WHERE ${whereScope}`,
          scopeParams(scope),
        );
        if (!row) continue;
        if (timeOf(row.expires_at) <= now.getTime()) {
          // A key older than a day is free again; the sweep may not have come by yet.
          await db.query(`DELETE FROM idempotent_requests WHERE ${whereScope} AND expires_at <= $6`, [
            ...scopeParams(scope),
            now,
          ]);
          continue;
        }
        if (row.request_hash !== requestHash) return { kind: 'reused' };
        if (row.status !== null && row.answer !== null) {
          return { kind: 'replay', status: row.status, contentType: row.content_type, answer: row.answer };
        }
        if (timeOf(row.lease_until) > now.getTime()) return { kind: 'running' };
        // The attempt holding the key stopped answering (a crash, a kill), or failed leaving quota
        // prepaid: its lease lapsed, so this one runs, with what it prepaid.
        const taken = await db.query<Pick<StoredRow, 'prepaid'> & { created_at: Date | string; prepaid_by: string | null }>(
          `UPDATE idempotent_requests SET claim = $6, lease_until = $7 WHERE ${whereScope} AND claim = $8 AND status IS NULL
           RETURNING prepaid, prepaid_by, created_at`,
          [...scopeParams(scope), token, leaseUntil, row.claim],
        );
        const [took] = taken;
        if (took) {
          return {
            kind: 'claimed',
            prepaid: prepaidOf(took.prepaid ?? null),
            since: new Date(timeOf(took.created_at)),
            ...(row.claim !== null && took.prepaid_by !== row.claim ? { unnoted: row.claim } : {}),
          };
        }
      }
      return { kind: 'running' };
    },

    /**
     * Whether the key holds an answer or prepaid quota, or a claim whose lease lapsed (its attempt may
     * have spent before it was killed, and noted nothing), not yet expired (whatever request it was for).
     */
    async answeredOrPrepaid(scope: KeyScope, now: Date): Promise<boolean> {
      const rows = await db.query(
        `SELECT 1 FROM idempotent_requests
         WHERE ${whereScope} AND (status IS NOT NULL OR prepaid IS NOT NULL OR lease_until <= $6) AND expires_at > $6`,
        [...scopeParams(scope), now],
      );
      return rows.length === 1;
    },

    /** Stores the answer of the attempt holding the claim; false when its lease was taken over meanwhile. */
    async complete(attempt: IdempotentAttempt, status: number, contentType: string | null, answer: string): Promise<boolean> {
      const updated = await db.query(
        `UPDATE idempotent_requests SET claim = NULL, lease_until = NULL, prepaid = NULL, prepaid_by = NULL, status = $7, content_type = $8, answer = $9
         WHERE ${whereScope} AND claim = $6 RETURNING status`,
        [...scopeParams(attempt.scope), attempt.token, status, contentType, answer],
      );
      return updated.length === 1;
    },

    /**
     * Extends the lease of a claim still held and unanswered; false when it is not (taken over, or
     * answered). A slow attempt (a batch of many chunks) keeps its key while its process lives.
     */
    async renew(attempt: IdempotentAttempt, leaseUntil: Date): Promise<boolean> {
      const renewed = await db.query(
        `UPDATE idempotent_requests SET lease_until = $7 WHERE ${whereScope} AND claim = $6 AND status IS NULL RETURNING claim`,
        [...scopeParams(attempt.scope), attempt.token, leaseUntil],
      );
      return renewed.length === 1;
    },

    /** What the attempt holding the claim has paid, while it runs; its lease is left as it is. False when it no longer holds it. */
    async notePaid(attempt: IdempotentAttempt, prepaid: PrepaidParts): Promise<boolean> {
      const noted = await db.query(
        `UPDATE idempotent_requests SET prepaid = $7, prepaid_by = $6 WHERE ${whereScope} AND claim = $6 AND status IS NULL RETURNING claim`,
        [...scopeParams(attempt.scope), attempt.token, JSON.stringify(prepaid)],
      );
      return noted.length === 1;
    },

    /**
     * Frees the key for a retry, keeping what the failed attempt leaves prepaid: the claim's lease
     * lapses at once (a retry takes it over, as after a crash), and the row keeps its day.
     */
    async leavePrepaid(attempt: IdempotentAttempt, prepaid: PrepaidParts, now: Date): Promise<boolean> {
      const left = await db.query(
        `UPDATE idempotent_requests SET lease_until = $7, prepaid = $8, prepaid_by = $6 WHERE ${whereScope} AND claim = $6 RETURNING claim`,
        [...scopeParams(attempt.scope), attempt.token, now, JSON.stringify(prepaid)],
      );
      return left.length === 1;
    },

    /**
     * Hands a claim just taken over back to the claim it took it from, its lease still lapsed: what
     * that attempt spent could not be learnt, and the next retry asks again.
     */
    async handBack(attempt: IdempotentAttempt, unnoted: string, now: Date): Promise<void> {
      await db.query(
        `UPDATE idempotent_requests SET claim = $7, lease_until = $8 WHERE ${whereScope} AND claim = $6 AND status IS NULL`,
        [...scopeParams(attempt.scope), attempt.token, unnoted, now],
      );
    },

    /** Frees the key for a retry: the attempt failed. False when its claim was taken over meanwhile. */
    async release(attempt: IdempotentAttempt): Promise<boolean> {
      const released = await db.query(`DELETE FROM idempotent_requests WHERE ${whereScope} AND claim = $6 RETURNING claim`, [
        ...scopeParams(attempt.scope),
        attempt.token,
      ]);
      return released.length === 1;
    },

    /** Removes keys past their day; resolves with how many. */
    async sweep(now: Date): Promise<number> {
      const removed = await db.query('DELETE FROM idempotent_requests WHERE expires_at <= $1 RETURNING 1', [now]);
      return removed.length;
    },
  };
}

/**
 * Installs the Idempotency-Key handling: a preValidation hook for JSON routes (register it before
 * the request authentication's hooks, so a replay is answered before any limit is spent), the
 * storing of answers in onSend, and a periodic sweep of expired keys.
 */
export function installIdempotency(
  app: FastifyInstance,
  deps: {
    db: SqlDatabase;
    clock: () => Date;
    leaseMs: number;
    log: Logger;
    /**
     * What answering a stored answer again costs, before it is sent (throws a 429 when refused): the
     * tier's burst. Replays spent nothing, so a leaked key could ask a batch's answer of megabytes
     * again as fast as the network carried it.
     */
    beforeReplay?: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
    /**
     * Whether the attempt that held `claim` spent its quota (its paid marker is set), settled for
     * good: an attempt that had not spent yet never will (rate-limiter.ts, closeAttemptSpend). Asked
     * when a retry takes over a claim whose holder noted nothing: killed between its spend and its
     * note, it paid for the whole request. Without it, such a retry pays again.
     */
    closeAttemptSpend?: (owner: { accountId: string; environment: string }, claim: string) => Promise<boolean>;
  },
): Idempotency {
  const store = createIdempotencyStore(deps.db);

  /**
   * Renews the claim every third of its lease while the attempt runs, so a request slower than
   * the lease (a batch's chunks, each allowed the request timeout) is never run a second time by
   * a retry; a crash stops the renewals, and the lease then lapses as before.
   */
  const keepLeased = (request: FastifyRequest, attempt: IdempotentAttempt) => {
    const startedMs = Date.now();
    const renew = () => {
      // Bounded whatever happens to the request: a handler that never ends does not hold its key for good.
      if (Date.now() - startedMs > maxLeaseRenewalMs) return stopRenewing(attempt);
      store.renew(attempt, new Date(deps.clock().getTime() + deps.leaseMs)).then(
        (held) => {
          if (!held) stopRenewing(attempt);
        },
        (error: unknown) => request.log.warn({ err: error }, 'idempotency: could not renew the lease of a claimed key'),
      );
    };
    attempt.renewal = setInterval(renew, Math.max(50, Math.floor(deps.leaseMs / 3)));
    attempt.renewal.unref();
  };
  const stopRenewing = (attempt: IdempotentAttempt | undefined) => {
    if (attempt?.renewal) clearInterval(attempt.renewal);
  };

  /**
   * A claim taken over from an attempt that noted nothing: when that attempt spent (killed between
   * its spend and its note), it paid for the whole request, so this one has all of it prepaid, and
   * notes so at once for any retry after it. Its marker is closed either way, so an attempt still
   * alive past its lease spends nothing after this. When the counters cannot say, the claim goes back
   * to that attempt, lapsed, and the request is refused with 503: a later retry asks again.
   */
  const settleUnnotedSpend = async (
    request: FastifyRequest,
    route: RouteDefinition,
    attempt: IdempotentAttempt,
    unnoted: string,
  ): Promise<void> => {
    if (!deps.closeAttemptSpend) return;
    let spent: boolean;
    try {
      spent = await deps.closeAttemptSpend(attempt.scope, unnoted);
    } catch (error) {
      await store.handBack(attempt, unnoted, deps.clock()).catch(() => undefined);
      request.log.warn({ err: error }, 'idempotency: could not learn whether a lapsed attempt spent its quota');
      throw new HallmarkError('SERVICE_UNAVAILABLE', 'The quota counters are unavailable; retry shortly.');
    }
    if (!spent) return;
    attempt.prepaid = paidParts(request, route);
    await store.notePaid(attempt, attempt.prepaid);
  };

  const admit = async (
    request: FastifyRequest,
    reply: FastifyReply,
    route: RouteDefinition,
    parts: Readonly<Record<string, string>>,
  ): Promise<boolean> => {
    const key = idempotencyKeyOf(request);
    const apiKey = request.apiKey;
    if (key === undefined || !apiKey) return true;
    const scope = scopeOf(apiKey, route, key);
    const token = randomUUID();
    const outcome = await store.claim(scope, requestHashOf(request, parts), token, deps.clock(), deps.leaseMs);
    switch (outcome.kind) {
      case 'claimed': {
        const attempt: IdempotentAttempt = {
          scope,
          token,
          sealingKey: sealingKeyOf(key, scope),
          prepaid: outcome.prepaid,
          since: outcome.since,
        };
        if (outcome.unnoted !== undefined) await settleUnnotedSpend(request, route, attempt, outcome.unnoted);
        request.idempotentAttempt = attempt;
        keepLeased(request, attempt);
        return true;
      }
      case 'replay': {
        // (An upload's limits were spent whole before its handler read the parts: not again.)
        if (!route.formBody) await deps.beforeReplay?.(request, reply);
        reply.status(outcome.status).header('idempotent-replayed', 'true');
        if (outcome.contentType) reply.header('content-type', outcome.contentType);
        reply.send(open(sealingKeyOf(key, scope), outcome.answer));
        return false;
      }
      case 'reused':
        throw new HallmarkError(
          'IDEMPOTENCY_KEY_REUSED',
          'This Idempotency-Key was used with a different request; use a new key for a new request.',
        );
      case 'running':
        reply.header('retry-after', String(runningRetryAfterSeconds));
        throw new HallmarkError('CONFLICT', 'A request with this Idempotency-Key is still running; retry shortly.', {
          retryAfterSeconds: runningRetryAfterSeconds,
        });
      default:
        return outcome satisfies never;
    }
  };

  app.addHook('preValidation', async (request, reply) => {
    const route = request.routeOptions.config?.route;
    if (!route?.idempotent) return;
    // An upload's parts are read by its handler, which calls admit() once it knows them; a text body
    // (a CSV) is read by now, and is the request as it is.
    if (route.formBody?.contentType === 'multipart/form-data') {
      idempotencyKeyOf(request);
      return;
    }
    // The body as parsed, before the schema's defaults fill it in: the same bytes give the same text.
    const proceed = await admit(request, reply, route, { body: JSON.stringify(request.body ?? null) });
    if (!proceed) return reply;
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const attempt = request.idempotentAttempt;
    if (!attempt) return payload;
    request.idempotentAttempt = undefined;
    stopRenewing(attempt);
    const status = reply.statusCode;
    const bytes = typeof payload === 'string' ? Buffer.from(payload) : Buffer.isBuffer(payload) ? payload : undefined;
    try {
      let held: boolean;
      if (status >= 200 && status < 300 && bytes) {
        const contentType = reply.getHeader('content-type');
        held = await store.complete(
          attempt,
          status,
          typeof contentType === 'string' ? contentType : null,
          seal(attempt.sealingKey, bytes),
        );
        if (!held) request.log.warn('idempotency: the claim lapsed before the answer was stored; a retry ran again');
      } else {
        // A refusal after the spend: what earlier attempts kept paid for nothing (prepaid-work.ts).
        const prepaid = refusedAfterPrepaidWork(request, status) ? {} : (attempt.prepaidAfter ?? attempt.prepaid);
        held = hasParts(prepaid) ? await store.leavePrepaid(attempt, prepaid, deps.clock()) : await store.release(attempt);
      }
      // Taken over by a retry that counted what this attempt noted as paid: it keeps all of it. Before,
      // it gave back the chunks it never sent (the retry made them, unpaid): a gateway stalled past
      // its lease made the day's quota hold more codes than it allows (a review of 2026-12-05).
      // So too when it spent after the retry's takeover noted nothing of it: the retry asked the
      // counters and counted the spend (settleUnnotedSpend), or closed the marker and it was not made.
      if (!held && (attempt.paidNoted || attempt.paidMarked)) request.paidForTakeover = true;
    } catch (error) {
      // The answer goes out anyway; the key stays claimed until its lease lapses, then a retry runs again.
      request.log.error({ err: error }, 'idempotency: could not store or release the answer of a claimed key');
    }
    return payload;
  });

  const sweep = setInterval(() => {
    store.sweep(deps.clock()).then(
      (removed) => {
        if (removed > 0) deps.log.debug({ removed }, 'idempotency: expired keys removed');
      },
      (error: unknown) => deps.log.warn({ err: error }, 'idempotency: sweeping expired keys failed'),
    );
  }, sweepIntervalMs);
  sweep.unref();
  app.addHook('onClose', async () => clearInterval(sweep));
  // An answer that never went through onSend stops the renewals too: the claim then lapses.
  app.addHook('onResponse', async (request) => stopRenewing(request.idempotentAttempt));

  return {
    admit: (request, reply, parts) => {
      const route = request.routeOptions.config?.route;
      if (!route?.idempotent) throw new Error(`${request.routeOptions.url} is not an idempotent route`);
      return admit(request, reply, route, parts);
    },
    hasStoredAnswerOrPrepaid: async (request, route) => {
      const key = idempotencyKeyOf(request);
      const apiKey = request.apiKey;
      // An upload's limits are spent before its handler reads the parts and replays: no use looking.
      if (key === undefined || !apiKey || !route.idempotent || route.formBody) return false;
      return store.answeredOrPrepaid(scopeOf(apiKey, route, key), deps.clock());
    },
    notePaid: async (request, parts) => {
      const attempt = request.idempotentAttempt;
      if (attempt && (await store.notePaid(attempt, parts))) attempt.paidNoted = true;
    },
  };
}

/**
 * The request's Idempotency-Key as its scope makes it unique (account, environment, API key,
 * operation and the key's hash), hashed: what a service may derive ids from, so a retry whose first
 * answer was lost after the service acted finds what it made instead of making it again. The API key
 * is in it so that another key's request with the same Idempotency-Key makes its own (a transfer's
 * code follows from its id). Undefined without a key.
 */
export function requestKeyOf(request: FastifyRequest): string | undefined {
  const scope = request.idempotentAttempt?.scope;
  if (!scope) return undefined;
  return createHash('sha256').update(scopeParams(scope).join('\n')).digest('hex');
}

/** `{ requestKey }` to spread into a service call's request when the request holds an Idempotency-Key, else nothing. */
export function requestKeyField(request: FastifyRequest): { requestKey: string } | Record<never, never> {
  const requestKey = requestKeyOf(request);
  return requestKey ? { requestKey } : {};
}
