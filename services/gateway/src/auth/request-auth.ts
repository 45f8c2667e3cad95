import { type AuthenticatedKey, holdsScope } from '@hallmark/accounts';
import { addressKeyOf, HallmarkError, type Principal, type RouteDefinition } from '@hallmark/contracts';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { Idempotency } from '../idempotency.ts';
import { leavePrepaid, paidParts, prepaidToday, prepaidUnitsOf, refusedAfterPrepaidWork } from '../prepaid-work.ts';
import { isSafeMethod } from '../safe-methods.ts';
import { mayHaveActed } from '../service-call.ts';
import type { Authenticator } from './authenticator.ts';
import { type ConsoleSessions, noSession } from './console-sessions.ts';
import { csrfRefusal } from './csrf.ts';
import { createLookUpTurns } from './failed-auth-holds.ts';
import type { KeyLastUsed } from './key-last-used.ts';
import { operationRefusedToKey } from './key-restrictions.ts';
import type { RateLimiter, RateLimitOutcome, SpentQuota } from './rate-limiter.ts';
import { retryInWords } from './retry-words.ts';
import { clearedSessionCookies, sessionTokenOf, severalSessionCookies, severalSessionCookiesWhy } from './session-cookie.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The key the request was made with; null on public routes. */
    apiKey: AuthenticatedKey | null;
    /** The route's daily quota as this request spent it; given back for refused work (onSend). */
    quotaSpent: SpentQuota | undefined;
    /**
     * Quota units of this request's spending to give back, as the route counted them (a batch's
     * refused items, work an earlier attempt made): at most what the request spent.
     */
    refusedItems: number | undefined;
    /**
     * Units earlier attempts with the request's Idempotency-Key left prepaid that the route found
     * not needed (a prepaid chunk's items refused now): given back beside `refusedItems`, when they
     * were spent in today's quota (`prepaidToday`), up to what was prepaid.
     */
    prepaidCredit: number | undefined;
    /** What earlier attempts left prepaid, and whether it was spent in today's (UTC) quota: read as the quota is spent. */
    prepaidSpent: { units: number; today: boolean } | undefined;
    /** The request failed, but its service may have done the work (it did not answer in time): its quota is kept. */
    mayHaveActed: boolean;
    /** The error code the request failed with, when it did (set as the error is answered). */
    failedWith: string | undefined;
    /** That error's details (prepaid-work.ts, provesWorkUndone: does it name a metadata schema?). */
    failedWithDetails: unknown;
    /** When the counters answered its spend (performance.now()), where that was before its body was read. */
    spentBeforeBodyAt: number | undefined;
    /** Its handler is about to run (preHandler): from here the request answers, and onSend settles its quota. */
    handlerReached: boolean;
    /** Its client left before its handler ran, and its spend was given back: it is not run. */
    leftUnrun: boolean;
  }
  interface FastifyInstance {
    /**
     * Checks the request's key again now, throwing its refusal (401 REVOKED_API_KEY, EXPIRED_API_KEY)
     * when it stopped working: for a handler that reads its body itself (a multipart upload) or works
     * long after its body (a batch, between chunks), which the preValidation check cannot cover.
     */
    confirmKeyStillWorks(request: FastifyRequest): Promise<void>;
  }
  interface FastifyContextConfig {
    /** The contract this route was registered from. */
    route?: RouteDefinition;
  }
}

/** The authenticated key of a route that requires one. */
export function requireApiKey(request: FastifyRequest): AuthenticatedKey {
  if (!request.apiKey) throw new Error(`${request.routeOptions.url} reads the API key but is not an api-key route`);
  return request.apiKey;
}

/** The account and environment the request acts for, as services scope every query by them. */
export function principalOf(request: FastifyRequest): Principal {
  const key = requireApiKey(request);
  return { accountId: key.accountId, environment: key.environment };
}

/**
 * How far the embedded form's counters may fall behind their writes before a request of one waits
 * for the write (its spend and the scans before it outlive a crash from then on).
 */
const maxUnsavedCountersMs = 300;

/**
 * A changing request whose body was read this long after the counters answered its spend reads its
 * key's stop markers again (rate-limiter.ts): its key may have been revoked through another gateway
 * meanwhile. Bodies that come with their headers cost no second read, however long the counters took.
 */
const bodyReadLateMs = 20;

/** Authentication failures that count against the client address: a key was sent, and it is no good. */
const badKeyCodes = new Set(['INVALID_API_KEY', 'REVOKED_API_KEY', 'EXPIRED_API_KEY']);

/**
 * Limits spent once the body is read rather than at once: routes that count items, and requests
 * with an Idempotency-Key, which idempotency.ts (its preValidation hook runs first) may answer from
 * the first attempt without spending anything.
 */
function spendsAfterBody(request: FastifyRequest, route: RouteDefinition): boolean {
  return route.quota?.per === 'item' || (route.idempotent === true && request.headers['idempotency-key'] !== undefined);
}

function itemCount(body: unknown): number {
  const items = (body as { items?: unknown } | undefined)?.items;
  return Array.isArray(items) ? Math.max(1, items.length) : 1;
}

/**
 * Why a limit refused, and when to retry. Refused with some of the limit left, the request needed
 * more than is left (a batch larger than what remains of the day's quota): a smaller one goes now.
 */
function refusalMessage(outcome: RateLimitOutcome): string {
  const retry = retryInWords(outcome.retryAfterSeconds ?? 1, outcome.reported.resetAtMs);
  const left = outcome.reported.remaining;
  if (outcome.heldAfterLarger) {
    return `Limit nearly reached (${outcome.refusedBy}): a request larger than the ${left} left was refused this second; retry ${retry}.`;
  }
  if (left > 0) {
    return `Limit reached (${outcome.refusedBy}): this request needs more than the ${left} left; send at most ${left} now, or retry ${retry}.`;
  }
  return `Limit reached (${outcome.refusedBy}); retry ${retry}.`;
}

/**
 * A limit's outcome on the answer: the X-RateLimit headers, and when refused a 429 with Retry-After
 * (thrown); a key another replica stopped a moment ago, its 401 (thrown).
 */
export function applyLimitOutcome(reply: FastifyReply, outcome: RateLimitOutcome): void {
  if (outcome.keyRefusal) throw outcome.keyRefusal;
  reply.header('x-ratelimit-limit', outcome.reported.limit);
  reply.header('x-ratelimit-remaining', outcome.reported.remaining);
  reply.header('x-ratelimit-reset', Math.ceil(outcome.reported.resetAtMs / 1000));
  if (outcome.allowed) return;
  reply.header('retry-after', outcome.retryAfterSeconds);
  const left = outcome.reported.remaining;
  throw new HallmarkError('RATE_LIMITED', refusalMessage(outcome), {
    limit: outcome.refusedBy,
    retryAfterSeconds: outcome.retryAfterSeconds,
    ...(left > 0 ? { remaining: left } : {}),
  });
}

/**
 * Every non-public route: authenticate (401s; 429 for an address past its failed
 * authentications this minute), check the route's scope (403), then spend the account's limits
 * (429). Refusals for authentication or scope happen before anything is spent.
 * Limits are spent as soon as the request is authorised, or, for routes that count items and
 * requests with an Idempotency-Key, once the body is read. Either way: one counter call per request.
 */
export function installRequestAuth(
  app: FastifyInstance,
  deps: {
    authenticator: Authenticator;
    rateLimiter: RateLimiter;
    /** The console's sessions: their cookie stands in for x-api-key on every api-key route. */
    sessions: ConsoleSessions;
    /** The gateway's own origins, which a cookie-authenticated request's Origin must be (csrf.ts). */
    ownOrigins: (request: FastifyRequest) => readonly string[];
    /** Notes each authorised request's key for lastUsedAt (written in batches, never per request). */
    keyLastUsed: KeyLastUsed;
    /**
     * Idempotency-Keys: a retry of an answered or prepaid request is not refused by held limits, and a
     * keyed attempt notes what it paid as soon as it has.
     */
    idempotency: Pick<Idempotency, 'hasStoredAnswerOrPrepaid' | 'notePaid'>;
    /** The quota's clock (daily windows end at 00:00 UTC): whether an earlier attempt's prepaid units are today's. */
    clock: () => Date;
  },
): void {
  app.decorateRequest('apiKey', null);
  app.decorateRequest('quotaSpent', undefined);
  app.decorateRequest('refusedItems', undefined);
  app.decorateRequest('prepaidCredit', undefined);
  app.decorateRequest('prepaidSpent', undefined);
  app.decorateRequest('mayHaveActed', false);
  app.decorateRequest('failedWith', undefined);
  app.decorateRequest('failedWithDetails', undefined);
  app.decorateRequest('spentBeforeBodyAt', undefined);
  app.decorateRequest('handlerReached', false);
  app.decorateRequest('leftUnrun', false);
  // This gateway's cache (its own revocations and the broadcasts it heard drop the key), then the
  // key's stop markers, which a revocation through any gateway set before it answered.
  app.decorate('confirmKeyStillWorks', async (request: FastifyRequest) => {
    const key = request.apiKey;
    if (!key) return;
    await deps.authenticator.authenticateKeyId(key.keyId);
    const stopped = await deps.rateLimiter.checkKeyStopped(key);
    if (stopped?.keyRefusal) throw stopped.keyRefusal;
  });

  /** Applies a limit's outcome and continues the request, or fails it. */
  const continueWith = (reply: FastifyReply, outcome: RateLimitOutcome, done: HookHandlerDoneFunction): void => {
    // The markers were read as the counters answered: a body is late if it comes well after this.
    if (reply.request.spentBeforeBodyAt !== undefined) reply.request.spentBeforeBodyAt = performance.now();
    try {
      applyLimitOutcome(reply, outcome);
      if (outcome.quotaSpent) reply.request.quotaSpent = outcome.quotaSpent;
      done();
    } catch (error) {
      done(error as Error);
    }
  };

  /** At once when the counters answered at once (in memory: no microtask, no closure); else when they do. */
  const settle = (
    reply: FastifyReply,
    outcome: RateLimitOutcome | Promise<RateLimitOutcome>,
    done: HookHandlerDoneFunction,
  ): void => {
    if (outcome instanceof Promise) {
      outcome.then(
        (settled) => continueWith(reply, settled, done),
        (error: Error) => done(error),
      );
    } else {
      continueWith(reply, outcome, done);
    }
  };

  /** The 429 of an address past its failed authentications, with its Retry-After. */
  const failedAuthRefusal = (reply: FastifyReply, outcome: RateLimitOutcome): HallmarkError => {
    reply.header('retry-after', outcome.retryAfterSeconds);
    return new HallmarkError(
      'RATE_LIMITED',
      `Too many failed authentications from this address; retry after ${outcome.retryAfterSeconds} s.`,
      { limit: outcome.refusedBy, retryAfterSeconds: outcome.retryAfterSeconds },
    );
  };

  /**
   * A key that failed authentication (not a missing one): counted against the client address;
   * past the address's failures this minute the answer is 429 with Retry-After instead of the
   * 401. A valid key from the same address is never refused by this. If the counters cannot be
   * reached the 401 stands: the request is refused either way.
   */
  const refuseBadKey = (
    request: FastifyRequest,
    reply: FastifyReply,
    error: Error,
    done: HookHandlerDoneFunction,
    counts: (failure: HallmarkError) => boolean = (failure) => badKeyCodes.has(failure.code),
  ): void => {
    if (!(error instanceof HallmarkError) || !counts(error)) {
      done(error);
      return;
    }
    const finish = (outcome: RateLimitOutcome) => done(outcome.allowed ? error : failedAuthRefusal(reply, outcome));
    const outcome = deps.rateLimiter.spendFailedAuthentication(request.ip);
    if (outcome instanceof Promise) outcome.then(finish, () => done(error));
    else finish(outcome);
  };

  /**
   * A request whose client left before its handler ran does no work, and answers nothing: fastify
   * stops it while it reads the body (no handler, no onSend), so its spend is given back here. Before
   * 2026-12-06 it was kept: a client that hung up during its key's look-up or the counters' round
   * trip paid for a code never made (hostile-metering, CI: 906 units paid for 901 codes). Not a keyed
   * request: what it paid is noted on its key, for its retry.
   */
  const giveBackUnrun = (request: FastifyRequest) => {
    const spent = request.quotaSpent;
    if (!spent || request.handlerReached || request.idempotentAttempt !== undefined) return;
    request.quotaSpent = undefined;
    request.leftUnrun = true;
    deps.rateLimiter.tellThresholdsKept(spent, spent.cost);
    deps.rateLimiter.refund([{ key: spent.key, cost: spent.cost }]).catch((error: unknown) => {
      request.log.warn({ err: error }, 'quota: could not give back the spend of a request whose client left');
    });
  };
  app.addHook('onRequestAbort', (request, done) => {
    giveBackUnrun(request);
    done();
  });
  app.addHook('preHandler', (request, reply, done) => {
    // Given back as its client left (its body was read all the same): nobody pays for its work.
    if (request.leftUnrun) reply.hijack();
    else request.handlerReached = true;
    done();
  });

  const spend = (request: FastifyRequest, reply: FastifyReply, route: RouteDefinition, next: HookHandlerDoneFunction) => {
    // The client may leave while its key is looked up or the counters answer: its spend is given
    // back then, and the request not run (onRequestAbort has passed already). A keyed request's spend
    // stays, noted on its key, and the request runs on to store its answer for the retry.
    const done: HookHandlerDoneFunction = (error) => {
      if (!error && request.raw.aborted) {
        giveBackUnrun(request);
        if (request.leftUnrun) reply.hijack();
      }
      next(error);
    };
    const key = request.apiKey;
    if (!key) return done();
    const items = route.quota?.per === 'item' ? itemCount(request.body) : 1;
    if (!spendsAfterBody(request, route)) request.spentBeforeBodyAt = performance.now();
    const prepaid = prepaidUnitsOf(request);
    const attempt = request.idempotentAttempt;
    const outcome = deps.rateLimiter.spend(key, route.quota, items, prepaid, attempt?.token);
    const keyed = attempt !== undefined;
    // Read now: the Idempotency-Key's hook forgets the attempt before the onSend below runs.
    if (prepaid > 0) request.prepaidSpent = { units: prepaid, today: prepaidToday(request, deps.clock()) };
    // In the embedded form the counters reach the database every 100 ms: a crash loses the spending
    // of the last moments, a unit for each request of one. A batch's spend (up to 10,000 units) is
    // written before its work starts, or a kill as its first chunk committed left those codes unpaid.
    // A request of one waits for the write too when the writes have fallen behind (the database busy
    // with a batch): they waited behind it for seconds, answered verifications piled up unwritten,
    // and a crash lost their counts and quota (a review of 2026-12-05: ~300 verifications over 2 s).
    if (!keyed && items <= 1) {
      if (deps.rateLimiter.unsavedForMs() <= maxUnsavedCountersMs) return settle(reply, outcome, done);
      return settle(reply, outcome, (error) => {
        if (error || !request.quotaSpent) return done(error);
        deps.rateLimiter.persistSpent().then(
          () => done(),
          () => done(),
        );
      });
    }
    settle(reply, outcome, (error) => {
      if (error || !request.quotaSpent) return done(error);
      // The spend set the claim's paid marker with the quota: a retry taking the claim over before
      // the note below reads it (idempotency.ts, settleUnnotedSpend).
      if (attempt) attempt.paidMarked = true;
      const persisted = deps.rateLimiter.persistSpent();
      // A keyed attempt then notes on its key what it paid, before any work starts: a gateway killed
      // before the answer runs no onSend to give back or keep quota, and its retry would pay it all
      // again. The note never outlasts the spend (written first): a kill between the two left a
      // day's quota noted prepaid and spent nowhere, and the retry made a batch of 1,000 free. A
      // kill between the spend and the note is covered by the paid marker set with the spend.
      const noted = keyed ? persisted.then(() => deps.idempotency.notePaid(request, paidParts(request, route))) : persisted;
      noted.then(
        () => done(),
        (failure: unknown) => {
          request.log.warn({ err: failure }, 'quota: could not write or note what a request paid');
          done();
        },
      );
    });
  };

  /** Look-ups of stored answers for accounts past their limits, one at a time per account and environment. */
  const storedAnswerLookUps = createLookUpTurns();
  const authorise = (
    request: FastifyRequest,
    reply: FastifyReply,
    route: RouteDefinition,
    key: AuthenticatedKey,
    done: HookHandlerDoneFunction,
  ) => {
    if (route.scope && !holdsScope(key.scopes, key.isOperator, route.scope)) {
      throw new HallmarkError('INSUFFICIENT_SCOPE', `This operation needs the scope ${route.scope}.`, {
        required: route.scope,
        granted: [...key.scopes],
      });
    }
    // A key restricted to some GTINs, on an operation that reaches beyond them (key-restrictions.ts).
    const restricted = operationRefusedToKey(key, route);
    if (restricted) throw restricted;
    request.apiKey = key;
    deps.keyLastUsed.note(key.keyId);
    if (!spendsAfterBody(request, route)) return spend(request, reply, route, done);
    // Refused anyway: refused before its body is read (a batch can be megabytes), spending nothing.
    const refused = deps.rateLimiter.refusalHolding(key, route.quota);
    if (!refused) return done();
    if (request.headers['idempotency-key'] === undefined) return applyLimitOutcome(reply, refused);
    // Unless it is the retry of a request already answered, or one an earlier attempt paid for (a
    // gateway killed before its answer: the retry spends that much less): its stored answer is sent
    // whatever the limits (a replay spends nothing), else a client whose test requests ran out at 08:00 could not
    // fetch a key's secret or a transfer's code it was sent once until midnight. The account's
    // look-ups go one at a time, so an account past its limits holds one connection at most.
    const lookUp = storedAnswerLookUps.inTurn(`${key.accountId}:${key.environment}`, () =>
      deps.idempotency.hasStoredAnswerOrPrepaid(request, route),
    );
    if (!lookUp) return applyLimitOutcome(reply, refused);
    lookUp.then(
      (stored) => (stored ? done() : continueWith(reply, refused, done)),
      // The store unreachable: the refusal stands, as it would have without the key.
      () => continueWith(reply, refused, done),
    );
  };

  /** authorise, with what it throws (a scope refused) handed to `done`. */
  const authoriseOrFail = (
    request: FastifyRequest,
    reply: FastifyReply,
    route: RouteDefinition,
    key: AuthenticatedKey,
    done: HookHandlerDoneFunction,
  ) => {
    try {
      authorise(request, reply, route, key, done);
    } catch (error) {
      done(error as Error);
    }
  };

  const lookUpTurns = createLookUpTurns();
  /** The 429 of a held address whose look-ups already have as many waiting as may: retry in a second. */
  const tooManyLookUps = (reply: FastifyReply, hold: RateLimitOutcome) =>
    failedAuthRefusal(reply, { ...hold, retryAfterSeconds: 1 });
  /**
   * A request with a key from an address past its failed authentications this minute
   * (failed-auth-holds.ts): a cached valid key is served as usual; a key known to be bad, or
   * malformed, is refused with the address's 429 at once, with no counter call; a key not cached
   * is looked up behind the address's other look-ups (one at a time), or refused with 429 and
   * Retry-After 1 when too many wait. So a guessing address holds at most one of the database's
   * connections, and a valid key from it (a client behind the same NAT) is still served.
   */
  const authenticateHeld = (
    request: FastifyRequest,
    reply: FastifyReply,
    route: RouteDefinition,
    header: string | string[] | undefined,
    hold: RateLimitOutcome,
    done: HookHandlerDoneFunction,
  ) => {
    let cached: AuthenticatedKey | undefined;
    try {
      cached = deps.authenticator.authenticateCached(header);
    } catch (error) {
      const refused = error instanceof HallmarkError && badKeyCodes.has(error.code);
      return done(refused ? failedAuthRefusal(reply, hold) : (error as Error));
    }
    if (cached) return authoriseOrFail(request, reply, route, cached, done);
    const lookUp = lookUpTurns.inTurn(addressKeyOf(request.ip), async () => deps.authenticator.authenticate(header));
    if (!lookUp) return done(tooManyLookUps(reply, hold));
    lookUp.then(
      (key) => authoriseOrFail(request, reply, route, key, done),
      (error: Error) => refuseBadKey(request, reply, error, done),
    );
  };

  // Callback-style hooks: a cached key and in-memory limits then cost no promise of their own.
  app.addHook('onRequest', (request, reply, done) => {
    const route = request.routeOptions.config?.route;
    if (!route) return done();
    const header = request.headers['x-api-key'];
    // Keyless requests to public routes spend the address's per-second limit; an optional-key
    // route (the ping) sent with a key is counted against the key's account instead.
    if (route.publicRateLimit && (route.auth === 'public' || header === undefined)) {
      return settle(reply, deps.rateLimiter.spendForAddress(request.ip), done);
    }
    if (route.auth === 'public') return done();
    // The console's own session routes read the cookie themselves; only the CSRF rule comes first.
    if (route.auth === 'session') {
      reply.header('cache-control', 'no-store');
      return done(csrfRefusal(request, deps.ownOrigins(request)));
    }
    if (route.auth === 'optional-key' && header === undefined) return done();
    // No x-api-key: the console's session cookie stands in for it (x-api-key wins when both are sent).
    const secure = request.protocol === 'https';
    const sessionToken = header === undefined ? sessionTokenOf(request.headers.cookie, secure) : undefined;
    if (sessionToken !== undefined) {
      reply.header('cache-control', 'no-store');
      const forged = csrfRefusal(request, deps.ownOrigins(request));
      if (forged) return done(forged);
      if (sessionToken === severalSessionCookies) {
        reply.header('set-cookie', clearedSessionCookies(secure, request.url));
        return done(noSession(severalSessionCookiesWhy));
      }
      // A session is read from the database on every use: a cookie that is no session counts as a
      // failed authentication, and a held address's cookies are looked up one at a time, as keys are.
      const lookUpSession = () => deps.sessions.authenticate(sessionToken);
      const hold = deps.rateLimiter.failedAuthenticationHold(request.ip);
      const session = hold ? lookUpTurns.inTurn(addressKeyOf(request.ip), lookUpSession) : lookUpSession();
      if (!session) return done(tooManyLookUps(reply, hold as RateLimitOutcome));
      session.then(
        ({ key: acting }) => authoriseOrFail(request, reply, route, acting, done),
        (error: Error) => refuseBadKey(request, reply, error, done, (failure) => failure.status === 401),
      );
      return;
    }
    const hold = deps.rateLimiter.failedAuthenticationHold(request.ip);
    if (hold) return authenticateHeld(request, reply, route, header, hold, done);
    let key: AuthenticatedKey | Promise<AuthenticatedKey>;
    try {
      key = deps.authenticator.authenticate(header);
    } catch (error) {
      return refuseBadKey(request, reply, error as Error, done);
    }
    if (key instanceof Promise) {
      key.then(
        (authenticated) => authoriseOrFail(request, reply, route, authenticated, done),
        (error: Error) => refuseBadKey(request, reply, error, done),
      );
    } else {
      authoriseOrFail(request, reply, route, key, done);
    }
  });

  app.addHook('preValidation', (request, reply, done) => {
    const route = request.routeOptions.config?.route;
    const spendNow = () => (route && spendsAfterBody(request, route) ? spend(request, reply, route, done) : done());
    const key = request.apiKey;
    // A request that changes something: its key again, now that its body has been read. Checked only
    // as its headers came, a key revoked while the body was held back (a gateway waits up to
    // HALLMARK_HTTP_REQUEST_TIMEOUT_MS for it) still made a key or changed the branding after the
    // revocation had answered. A map look-up while the key stays cached (this replica's revocations
    // and broadcasts drop it); and, for a body that came late, the key's stop markers, which a
    // revocation through another gateway set before it answered, heard here or not.
    if (!key || isSafeMethod(request.method)) return spendNow();
    const markersNow = () => {
      const late = request.spentBeforeBodyAt !== undefined && performance.now() - request.spentBeforeBodyAt > bodyReadLateMs;
      const stopped = late ? deps.rateLimiter.checkKeyStopped(key) : undefined;
      if (!(stopped instanceof Promise)) return stopped?.keyRefusal ? done(stopped.keyRefusal) : spendNow();
      stopped.then(
        (settled) => (settled?.keyRefusal ? done(settled.keyRefusal) : spendNow()),
        (error: Error) => done(error),
      );
    };
    let current: AuthenticatedKey | Promise<AuthenticatedKey>;
    try {
      current = deps.authenticator.authenticateKeyId(key.keyId);
    } catch (error) {
      return done(error as Error);
    }
    if (current instanceof Promise) current.then(markersNow, (error: Error) => done(error));
    else markersNow();
  });

  // Runs before the error's answer is made (and so before onSend).
  // A keyed request that makes one thing leaves that unit prepaid for its retry (prepaid-work.ts);
  // a batch's route says which of its chunks it leaves.
  app.addHook('onError', (request, _reply, error, done) => {
    if (error instanceof HallmarkError) {
      request.failedWith = error.code;
      request.failedWithDetails = error.details;
    }
    if (mayHaveActed(error)) {
      request.mayHaveActed = true;
      const quota = request.routeOptions.config?.route?.quota;
      if (quota && quota.per !== 'item' && request.quotaSpent) leavePrepaid(request, { '0': 1 });
    }
    done();
  });

  // Quota is spent only for accepted work: a refused request (4xx, or a 5xx that did nothing) and a
  // batch's refused items get their daily quota back before the answer leaves. A request whose
  // service did not answer in time keeps it: the work may be done, and a keyed retry that finds it is
  // given back what it spends again (before, every such timeout was work for free); one that did
  // nothing is not charged again (prepaid-work.ts).
  app.addHook('onSend', (request, reply, payload, done) => {
    const spent = request.quotaSpent;
    if (!spent) return done(null, payload);
    // A batch counts what it refused item by item, whatever its status; any other request, all or
    // nothing. A batch may give back more than it spent: what an earlier attempt kept for items
    // refused now, when that was today's quota (before 2026-12-05 that was never given back, and a
    // day's credit could pay for the next day's codes instead).
    // A request that makes one thing, refused after its spend, gives back what its earlier attempts
    // kept too: that work was not done (prepaid-work.ts, refusedAfterPrepaidWork).
    const prepaid = request.prepaidSpent;
    const creditAsked = refusedAfterPrepaidWork(request, reply.statusCode) ? (prepaid?.units ?? 0) : (request.prepaidCredit ?? 0);
    const credit = prepaid?.today ? Math.min(prepaid.units, Math.max(0, creditAsked)) : 0;
    // (The Idempotency-Key's onSend, before this one, says whether a retry took the key over counting on this spend.)
    const refused = request.paidForTakeover
      ? 0
      : request.refusedItems !== undefined
        ? Math.min(spent.cost, Math.max(0, request.refusedItems)) + credit
        : reply.statusCode >= 400 && !request.mayHaveActed
          ? spent.cost + credit
          : 0;
    deps.rateLimiter.tellThresholdsKept(spent, refused);
    if (refused === 0) return done(null, payload);
    request.quotaSpent = undefined;
    deps.rateLimiter.refund([{ key: spent.key, cost: refused }]).then(
      () => done(null, payload),
      (error: unknown) => {
        request.log.warn({ err: error }, 'quota of refused work could not be given back');
        done(null, payload);
      },
    );
  });
}

/** Measurement only (GatewayDependencies.uncheckedKey): every request acts as `key`, unchecked and unlimited. */
export function installUncheckedKey(app: FastifyInstance, key: AuthenticatedKey): void {
  app.decorateRequest('apiKey', null);
  app.decorate('confirmKeyStillWorks', async () => {});
  app.addHook('onRequest', (request, _reply, done) => {
    request.apiKey = key;
    done();
  });
}
