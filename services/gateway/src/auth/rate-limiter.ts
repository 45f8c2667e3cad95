import { type AuthenticatedKey, testKeyRequestsPerDay, tierLimits } from '@hallmark/accounts';
import type { Cache, CounterState, QuotaCounter, QuotaDecision, QuotaRefund } from '@hallmark/cache';
import { addressKeyOf, HallmarkError, type Principal, type QuotaRule } from '@hallmark/contracts';
import { createFailedAuthHolds } from './failed-auth-holds.ts';
import { createRecentRefusals } from './recent-refusals.ts';

export interface RateLimitOutcome {
  allowed: boolean;
  /** What X-RateLimit-Limit/Remaining/Reset report: the refusing counter, else the tightest daily one, else the burst. */
  reported: CounterState;
  /** Seconds until the refusing counter's window ends (Retry-After), when refused. */
  retryAfterSeconds?: number;
  /** Which limit refused the request. */
  refusedBy?: CounterName;
  /** The route's daily quota as spent, when allowed: given back for work that is then refused. */
  quotaSpent?: SpentQuota;
  /** Refused unread for the rest of the second, after a request larger than what the quota has left (recent-refusals.ts). */
  heldAfterLarger?: boolean;
  /**
   * A refusal that is not a limit's, answered instead of a 429: the key stopped working on another
   * replica a moment ago (a stop marker: its 401), or a retry took this keyed attempt over before it
   * spent (its paid marker closed: 409).
   */
  keyRefusal?: HallmarkError;
}

/** How a key stopped working: revoked, or rotated with no grace (expired at once). */
export type KeyStop = 'REVOKED_API_KEY' | 'EXPIRED_API_KEY';
const keyStops: readonly KeyStop[] = ['REVOKED_API_KEY', 'EXPIRED_API_KEY'];

/**
 * How long a stop marker lasts: longer than any replica keeps the key cached without hearing of the
 * change (its broadcast takes milliseconds, the api_keys cache epoch a second, a cached key 30 s).
 */
const keyStopMarkerMs = 60_000;

/** A route's daily quota as a request spent it, and the thresholds it took the quota past, told once the request has settled what it keeps (`settle`). */
export interface SpentQuota extends QuotaRefund {
  crossed: QuotaThresholdCrossed[];
}

type CounterName =
  | 'requests-per-second'
  | 'requests-per-day'
  | 'key-requests-per-day'
  | 'key-requests-per-minute'
  | 'requests-per-second-per-address'
  | 'failed-authentications-per-address'
  | 'test-key-requests-per-day'
  | 'generate-per-day'
  | 'verify-per-day';

const dayMs = 86_400_000;

/**
 * The limit of a counter that only counts (usage: a live account's requests, an unlimited tier's
 * generate and verify, each key's requests): spent with the limits in the same atomic call, never refusing.
 */
export const countedOnly = Number.MAX_SAFE_INTEGER;

/** An account's counts of the current UTC day in one environment. */
export interface DailyUsage {
  /** YYYY-MM-DD (UTC). */
  day: string;
  resetsAtMs: number;
  requests: number;
  generate: number;
  verify: number;
}

/** A daily quota an account just took past 80% or 100% (webhooks' quota.threshold). */
export interface QuotaThresholdCrossed {
  accountId: string;
  environment: 'test' | 'live';
  quota: 'generate' | 'verify' | 'requests';
  threshold: 80 | 100;
  used: number;
  limit: number;
  /** The UTC day, YYYY-MM-DD. */
  day: string;
}

const dailyQuotaOf: Partial<Record<CounterName, QuotaThresholdCrossed['quota']>> = {
  'test-key-requests-per-day': 'requests',
  'generate-per-day': 'generate',
  'verify-per-day': 'verify',
};

/** An account's decision as the response reports it: the refusing counter, else the tightest daily one, else the burst. */
function outcomeOf(decision: QuotaDecision, names: readonly CounterName[], nowMs: number): RateLimitOutcome {
  if (!decision.allowed && decision.refusedIndex !== undefined) {
    const refused = decision.counters[decision.refusedIndex] as CounterState;
    return {
      allowed: false,
      reported: refused,
      retryAfterSeconds: Math.max(1, Math.ceil((refused.resetAtMs - nowMs) / 1000)),
      ...(names[decision.refusedIndex] ? { refusedBy: names[decision.refusedIndex] } : {}),
    };
  }
  // The tightest daily limit, else the burst; counters that only count are not limits.
  let daily: CounterState | undefined;
  for (let index = 1; index < decision.counters.length; index++) {
    const counter = decision.counters[index] as CounterState;
    if (counter.limit >= countedOnly) continue;
    if (!daily || counter.remaining < daily.remaining) daily = counter;
  }
  return { allowed: true, reported: daily ?? (decision.counters[0] as CounterState) };
}

/** A key's own request counter of a day or a minute, under its account's hash tag. */
function keyRequestsCounter(
  key: { accountId: string; environment: string; keyId: string },
  window: 'd' | 'm',
  index: number,
): string {
  return `rl:{${key.accountId}:${key.environment}}:k:${key.keyId}:${window}:${index}`;
}

/**
 * The marker that `key` stopped working (revoked, or expired by a rotation with no grace), under its
 * account's hash tag: every spend of the key reads it in the same script call (cost 0, limit 0), so
 * a key stopped through one gateway is refused by every other from the moment that gateway answers,
 * before their caches hear of it.
 */
function keyStopMarker(key: { accountId: string; environment: string; keyId: string }, stop: KeyStop): string {
  return `rl:{${key.accountId}:${key.environment}}:k:${key.keyId}:${stop === 'REVOKED_API_KEY' ? 'revoked' : 'expired'}`;
}

/**
 * How long an attempt's paid marker lasts: longer than its Idempotency-Key (a day), whose retries
 * read it (idempotency.ts, settleUnnotedSpend).
 */
const attemptPaidMarkerMs = 25 * 60 * 60 * 1000;

/**
 * The marker that the keyed attempt holding `claim` spent its quota, under its account's hash tag,
 * set in the spend's atomic call (cost 1, limit 1). A retry that takes that claim over with nothing
 * noted on the key spends it too (closeAttemptSpend): refused, the attempt had spent; allowed, it had
 * not, and its spend, were it still to come, is now refused whole.
 */
function attemptPaidMarker(owner: { accountId: string; environment: string }, claim: string): string {
  return `rl:{${owner.accountId}:${owner.environment}}:paid:${claim}`;
}

/** The refusal of a keyed attempt whose claim a retry took over before it spent: the retry makes the work. */
const takenOverRefusal = () =>
  new HallmarkError(
    'CONFLICT',
    'A retry with this Idempotency-Key took this request over while it waited; the retry makes and answers it.',
  );

/** The key's stop markers, read (not spent) with its counters: they refuse once set. */
function keyStopChecks(key: AuthenticatedKey, nowMs: number): QuotaCounter[] {
  return keyStops.map((stop) => ({ key: keyStopMarker(key, stop), cost: 0, limit: 0, resetAtMs: nowMs + keyStopMarkerMs }));
}

/**
 * A decision on counters followed by keyStopChecks: the stop it found, if any, and the decision on
 * the counters before the checks (a check refuses only when its marker is set).
 */
function splitKeyStops(decision: QuotaDecision): { stopped: KeyStop | undefined; decision: QuotaDecision } {
  const checks = decision.counters.length - keyStops.length;
  const stopped = keyStops.find((_, index) => (decision.counters[checks + index]?.used ?? 0) > 0);
  return { stopped, decision: stopped ? decision : { ...decision, counters: decision.counters.slice(0, checks) } };
}

/** A per-address decision (public routes): one counter, one second. */
function addressOutcomeOf(decision: QuotaDecision): RateLimitOutcome {
  const state = decision.counters[0] as CounterState;
  return decision.allowed
    ? { allowed: true, reported: state }
    : { allowed: false, reported: state, retryAfterSeconds: 1, refusedBy: 'requests-per-second-per-address' };
}

/** A failed authentication's decision: counted, or refused until the minute ends. */
function failureOutcomeOf(decision: QuotaDecision, nowMs: number): RateLimitOutcome {
  const state = decision.counters[0] as CounterState;
  return decision.allowed ? { allowed: true, reported: state } : failuresRefusal(state, nowMs);
}

/** The refusal of an address past its failed authentications, until its counter's minute ends. */
function failuresRefusal(state: CounterState, nowMs: number): RateLimitOutcome {
  return {
    allowed: false,
    reported: state,
    retryAfterSeconds: Math.max(1, Math.ceil((state.resetAtMs - nowMs) / 1000)),
    refusedBy: 'failed-authentications-per-address',
  };
}

/** The account's requests in `second`, against the tier's burst: spent by every request and every replay. */
const burstCounter = (key: AuthenticatedKey, second: number): QuotaCounter => ({
  key: `rl:{${key.accountId}:${key.environment}}:s:${second}`,
  cost: 1,
  limit: tierLimits[key.tier].requestsPerSecond,
  resetAtMs: (second + 1) * 1000,
});

/**
 * Per account and environment limits (every key of the account in that environment spends on the
 * same counters), in one atomic call per request: the tier's burst per second, the test
 * environment's 100 requests a day, and the tier's daily generate or verify quota (a batch spends
 * one per item). Daily windows end at 00:00 UTC. All or nothing: a refused request spends nothing,
 * and the daily quota of work the service then refuses (a 4xx or 5xx, a batch's refused items) is
 * given back (`refund`, from request-auth's onSend).
 */
export function createRateLimiter(options: {
  cache: Cache;
  clock: () => Date;
  publicPerSecond?: number;
  authFailuresPerMinute?: number;
  /**
   * Told of each account's quota, threshold and day until a telling succeeds on this replica
   * (compliance-service records it once in all): a telling that fails, compliance-service being
   * away, is told again by the next request past the threshold, so none is lost to an outage.
   */
  onQuotaThreshold?: (crossed: QuotaThresholdCrossed) => Promise<void> | void;
  /**
   * The 401 of a key a stop marker refused, which this replica's cache still held: read again from
   * the database (authenticator.ts, refusalOfStoppedKey); without it, the stop's code alone.
   */
  refusalOfStoppedKey?: (keyId: string, stop: KeyStop) => Promise<HallmarkError>;
}) {
  const publicPerSecond = options.publicPerSecond ?? 10;
  // Thresholds this replica already told of, for the current day only (a few per account), and those being told.
  let announcedDay = -1;
  const announced = new Set<string>();
  const telling = new Set<string>();
  /**
   * The thresholds of daily quotas this decision reached: 80% and 100% of what is used, counting
   * this request when it was allowed. A request refused by a quota already past 80% reached its
   * 100% (what is left cannot take it); one refused for being larger than most of a day's quota
   * reached nothing (its 429 says so). Before, such a refusal, and work later given back, were told
   * as 100% used, and the day's real exhaustion was then never told.
   */
  const thresholdsOf = (key: AuthenticatedKey, decision: QuotaDecision, names: readonly CounterName[], day: number) => {
    const reached: Array<{ name: CounterName; crossed: QuotaThresholdCrossed }> = [];
    if (!options.onQuotaThreshold) return reached;
    decision.counters.forEach((counter, index) => {
      const name = names[index] as CounterName;
      const quota = dailyQuotaOf[name];
      if (!quota || counter.limit <= 0) return;
      const refusedPastEighty = decision.refusedIndex === index && counter.used * 100 >= counter.limit * 80;
      for (const threshold of [80, 100] as const) {
        if (!refusedPastEighty && counter.used * 100 < counter.limit * threshold) continue;
        reached.push({
          name,
          crossed: {
            accountId: key.accountId,
            environment: key.environment,
            quota,
            threshold,
            used: counter.used,
            limit: counter.limit,
            day: new Date(day * dayMs).toISOString().slice(0, 10),
          },
        });
      }
    });
    return reached;
  };
  /** Tells each threshold once per account, quota and day on this replica (again after a failed telling). */
  const tell = (crossings: readonly QuotaThresholdCrossed[]) => {
    const notify = options.onQuotaThreshold;
    if (!notify) return;
    for (const crossed of crossings) {
      const day = Math.floor(Date.parse(`${crossed.day}T00:00:00.000Z`) / dayMs);
      if (announcedDay !== day) {
        announced.clear();
        announcedDay = day;
      }
      const id = `${crossed.accountId}:${crossed.environment}:${crossed.quota}:${crossed.threshold}`;
      if (announced.has(id) || telling.has(id)) continue;
      telling.add(id);
      let told: Promise<void> | void;
      try {
        told = notify(crossed);
      } catch {
        telling.delete(id);
        continue;
      }
      Promise.resolve(told)
        .then(
          () => {
            if (announcedDay === day) announced.add(id);
          },
          () => {}, // not told: the next request past the threshold tells it again
        )
        .finally(() => telling.delete(id));
    }
  };
  const authFailuresPerMinute = options.authFailuresPerMinute ?? 20;
  const recentRefusals = createRecentRefusals();
  const failedAuthHolds = createFailedAuthHolds();
  /** The refusal of a key a stop marker names: nothing was spent (a set marker refuses the whole call). */
  const stoppedKey = async (key: AuthenticatedKey, decision: QuotaDecision, stop: KeyStop): Promise<RateLimitOutcome> => {
    const keyRefusal = options.refusalOfStoppedKey
      ? await options.refusalOfStoppedKey(key.keyId, stop)
      : new HallmarkError(stop, 'The API key no longer works.');
    return { allowed: false, reported: decision.counters[0] as CounterState, keyRefusal };
  };
  /** The account's outcome, its refusal noted for requests not yet read (`refusalHolding`). */
  const decided = (key: AuthenticatedKey, outcome: RateLimitOutcome, nowMs: number): RateLimitOutcome => {
    if (!outcome.allowed && outcome.refusedBy) recentRefusals.note(key, outcome.refusedBy, outcome.reported, nowMs);
    return outcome;
  };
  return {
    /**
     * A refusal of the account that certainly still holds for this route (recent-refusals.ts),
     * checked before a body is read; undefined when the request must be counted to know. Spends nothing.
     */
    refusalHolding(key: AuthenticatedKey, rule: QuotaRule | undefined): RateLimitOutcome | undefined {
      const nowMs = options.clock().getTime();
      const refusal = recentRefusals.holding(key, rule, nowMs);
      if (!refusal) return undefined;
      return {
        allowed: false,
        reported: refusal.reported,
        retryAfterSeconds: refusal.partial ? 1 : Math.max(1, Math.ceil((refusal.reported.resetAtMs - nowMs) / 1000)),
        refusedBy: refusal.refusedBy as CounterName,
        ...(refusal.partial ? { heldAfterLarger: true } : {}),
      };
    },

    /**
     * Counts one failed authentication (unknown, malformed, revoked or expired key) of a client
     * address in the current minute; refused once the address has had its failures this minute,
     * so key guessing and replaying dead keys slow down to a trickle. Counted through the cache, so
     * every gateway replica shares the count (Redis). Keys that authenticate never come here.
     */
    spendFailedAuthentication(address: string): RateLimitOutcome | Promise<RateLimitOutcome> {
      const nowMs = options.clock().getTime();
      const minute = Math.floor(nowMs / 60_000);
      const addressKey = addressKeyOf(address);
      const counter = {
        key: `rl:{authfail:${addressKey}}:m:${minute}`,
        cost: 1,
        limit: authFailuresPerMinute,
        resetAtMs: (minute + 1) * 60_000,
      };
      const noted = (outcome: RateLimitOutcome) => {
        if (!outcome.allowed) failedAuthHolds.note(addressKey, outcome.reported, nowMs);
        return outcome;
      };
      const decision = options.cache.consumeQuotas([counter]);
      return decision instanceof Promise
        ? decision.then((settled) => noted(failureOutcomeOf(settled, nowMs)))
        : noted(failureOutcomeOf(decision, nowMs));
    },

    /**
     * The refusal of an address past its failed authentications this minute, as this replica last
     * saw it (failed-auth-holds.ts), while the minute lasts; undefined otherwise. Spends nothing:
     * a request with a bad key from a held address is refused with it, without a counter call.
     */
    failedAuthenticationHold(address: string): RateLimitOutcome | undefined {
      const nowMs = options.clock().getTime();
      const hold = failedAuthHolds.holding(addressKeyOf(address), nowMs);
      return hold && failuresRefusal(hold.reported, nowMs);
    },

    /**
     * Public (keyless) routes: a per-second limit per client address (an IPv6 address's /64:
     * addressKeyOf). Behind a proxy, set fastify's trustProxy so the address is the client's, not the proxy's.
     */
    spendForAddress(address: string): RateLimitOutcome | Promise<RateLimitOutcome> {
      const nowMs = options.clock().getTime();
      const second = Math.floor(nowMs / 1000);
      const counter = {
        key: `rl:{ip:${addressKeyOf(address)}}:s:${second}`,
        cost: 1,
        limit: publicPerSecond,
        resetAtMs: (second + 1) * 1000,
      };
      const decision = options.cache.consumeQuotas([counter]);
      return decision instanceof Promise ? decision.then(addressOutcomeOf) : addressOutcomeOf(decision);
    },

    /**
     * Answers at once when the counters do (memory), else with a promise (Redis). `prepaid`: quota
     * units an earlier attempt with the request's Idempotency-Key kept for work it may not have done
     * (prepaid-work.ts); the route's quota is spent that much less.
     */
    /**
     * The tier's burst alone (requests per second): what answering a request's stored answer again
     * costs (idempotency.ts). No daily count: a retry past the day's limits still gets its answer.
     */
    spendBurst(key: AuthenticatedKey): RateLimitOutcome | Promise<RateLimitOutcome> {
      const nowMs = options.clock().getTime();
      const second = Math.floor(nowMs / 1000);
      const names: CounterName[] = ['requests-per-second'];
      const counters: QuotaCounter[] = [burstCounter(key, second), ...keyStopChecks(key, nowMs)];
      const outcomeOfDecision = (all: QuotaDecision): RateLimitOutcome | Promise<RateLimitOutcome> => {
        const { stopped, decision: settled } = splitKeyStops(all);
        return stopped ? stoppedKey(key, settled, stopped) : decided(key, outcomeOf(settled, names, nowMs), nowMs);
      };
      const decision = options.cache.consumeQuotas(counters);
      return decision instanceof Promise ? decision.then(outcomeOfDecision) : outcomeOfDecision(decision);
    },

    spend(
      key: AuthenticatedKey,
      rule: QuotaRule | undefined,
      items: number,
      prepaid = 0,
      /** The claim of the request's Idempotency-Key: its paid marker is set with the route's quota (attemptPaidMarker). */
      attemptClaim?: string,
    ): RateLimitOutcome | Promise<RateLimitOutcome> {
      const nowMs = options.clock().getTime();
      const second = Math.floor(nowMs / 1000);
      const day = Math.floor(nowMs / dayMs);
      const endOfDayMs = (day + 1) * dayMs;
      // Limits belong to the account and environment, not the key: minting keys adds no quota.
      // The {account:environment} hash tag keeps the counters in one Redis Cluster slot, as a script needs.
      const prefix = `rl:{${key.accountId}:${key.environment}}`;
      const limits = tierLimits[key.tier];
      const names: CounterName[] = ['requests-per-second'];
      const counters: QuotaCounter[] = [burstCounter(key, second)];
      // The account's requests of the day: limited in test, only counted in live (GET /usage).
      names.push(key.environment === 'test' ? 'test-key-requests-per-day' : 'requests-per-day');
      counters.push({
        key: `${prefix}:d:${day}:requests`,
        cost: 1,
        limit: key.environment === 'test' ? testKeyRequestsPerDay : countedOnly,
        resetAtMs: endOfDayMs,
      });
      // The route's daily quota: limited by the tier, or only counted where the tier has none.
      let quota: QuotaCounter | undefined;
      const quotaName: CounterName | undefined = rule && (rule.kind === 'generate' ? 'generate-per-day' : 'verify-per-day');
      if (rule && quotaName) {
        const routeLimit = rule.kind === 'generate' ? limits.generatePerDay : limits.verifyPerDay;
        names.push(quotaName);
        quota = {
          key: `${prefix}:d:${day}:${rule.kind}`,
          cost: Math.max(0, (rule.per === 'item' ? items : 1) - prepaid),
          limit: routeLimit ?? countedOnly,
          resetAtMs: endOfDayMs,
        };
        counters.push(quota);
      }
      // The key's own requests, today and this minute (GET /usage/keys): only counted. Same hash
      // tag, same script call: no extra round trip and no database write.
      const minute = Math.floor(nowMs / 60_000);
      names.push('key-requests-per-day', 'key-requests-per-minute');
      counters.push(
        { key: keyRequestsCounter(key, 'd', day), cost: 1, limit: countedOnly, resetAtMs: endOfDayMs },
        { key: keyRequestsCounter(key, 'm', minute), cost: 1, limit: countedOnly, resetAtMs: (minute + 1) * 60_000 },
      );
      const marked = quota !== undefined && attemptClaim !== undefined;
      if (marked)
        counters.push({ key: attemptPaidMarker(key, attemptClaim), cost: 1, limit: 1, resetAtMs: nowMs + attemptPaidMarkerMs });
      counters.push(...keyStopChecks(key, nowMs));
      const decision = options.cache.consumeQuotas(counters);
      // The route's quota is what a refused request gets back (`refund`); the thresholds an allowed
      // request took it past are told once it is known what the request keeps (`settle`).
      const outcomeOfDecision = (all: QuotaDecision): RateLimitOutcome | Promise<RateLimitOutcome> => {
        const { stopped, decision: unmarked } = splitKeyStops(all);
        if (stopped) return stoppedKey(key, unmarked, stopped);
        const markerIndex = unmarked.counters.length - 1;
        if (marked && unmarked.refusedIndex === markerIndex) {
          return { allowed: false, reported: unmarked.counters[0] as CounterState, keyRefusal: takenOverRefusal() };
        }
        const settled = marked ? { ...unmarked, counters: unmarked.counters.slice(0, markerIndex) } : unmarked;
        const outcome = decided(key, outcomeOf(settled, names, nowMs), nowMs);
        const reached = thresholdsOf(key, settled, names, day);
        const keepsTelling = (name: CounterName) => outcome.allowed && name === quotaName;
        tell(reached.filter(({ name }) => !keepsTelling(name)).map(({ crossed }) => crossed));
        if (!outcome.allowed || !quota) return outcome;
        const crossed = reached.filter(({ name }) => keepsTelling(name)).map((each) => each.crossed);
        return { ...outcome, quotaSpent: { key: quota.key, cost: quota.cost, crossed } };
      };
      // In memory the decision is here already: no promise.
      return decision instanceof Promise ? decision.then(outcomeOfDecision) : outcomeOfDecision(decision);
    },

    /**
     * Whether the keyed attempt holding `claim` spent its quota (its paid marker set), settled for
     * good: the marker is spent here too, so when it was not set the attempt's spend, if it comes,
     * is refused whole (idempotency.ts, settleUnnotedSpend).
     */
    async closeAttemptSpend(owner: { accountId: string; environment: string }, claim: string): Promise<boolean> {
      const decision = await options.cache.consumeQuotas([
        {
          key: attemptPaidMarker(owner, claim),
          cost: 1,
          limit: 1,
          resetAtMs: options.clock().getTime() + attemptPaidMarkerMs,
        },
      ]);
      return !decision.allowed;
    },

    /**
     * Sets the marker that `key` stopped working (keyStopMarker), once its revocation or rotation is
     * stored and before it is answered: from then on every gateway refuses the key on its next
     * spend, whether or not it has heard the broadcast.
     */
    async markKeyStopped(key: { accountId: string; keyId: string }, stop: KeyStop): Promise<void> {
      const nowMs = options.clock().getTime();
      // In both environments of the account: a live key's console session acts in test (actingKey,
      // console-sessions.ts), and its spends read the markers under the environment it acts in.
      await Promise.all(
        (['live', 'test'] as const).map((environment) =>
          options.cache.consumeQuotas([
            {
              key: keyStopMarker({ ...key, environment }, stop),
              cost: 1,
              limit: countedOnly,
              resetAtMs: nowMs + keyStopMarkerMs,
            },
          ]),
        ),
      );
    },

    /**
     * The key's stop markers alone, read and not spent: the refusal of a key stopped through another
     * gateway since this request spent (its body held back past the revocation), else undefined.
     */
    checkKeyStopped(key: AuthenticatedKey): RateLimitOutcome | undefined | Promise<RateLimitOutcome | undefined> {
      const checks = keyStopChecks(key, options.clock().getTime());
      const outcomeOfDecision = (decision: QuotaDecision) => {
        const { stopped } = splitKeyStops(decision);
        return stopped ? stoppedKey(key, decision, stopped) : undefined;
      };
      const decision = options.cache.consumeQuotas(checks);
      return decision instanceof Promise ? decision.then(outcomeOfDecision) : outcomeOfDecision(decision);
    },

    /**
     * The account's counts of the current UTC day in one environment (GET /usage): requests, codes
     * generated, verifications. Read through the same counters the limits spend (a spend of 0), so
     * every replica reads the same numbers from Redis.
     */
    async readDailyUsage(owner: Principal): Promise<DailyUsage> {
      const nowMs = options.clock().getTime();
      const day = Math.floor(nowMs / dayMs);
      const resetsAtMs = (day + 1) * dayMs;
      const prefix = `rl:{${owner.accountId}:${owner.environment}}`;
      const names = ['requests', 'generate', 'verify'] as const;
      const decision = await options.cache.consumeQuotas(
        names.map((name) => ({ key: `${prefix}:d:${day}:${name}`, cost: 0, limit: countedOnly, resetAtMs: resetsAtMs })),
      );
      const used = (index: number) => decision.counters[index]?.used ?? 0;
      return {
        day: new Date(day * dayMs).toISOString().slice(0, 10),
        resetsAtMs,
        requests: used(0),
        generate: used(1),
        verify: used(2),
      };
    },

    /** Each key's requests of the current UTC day and minute (GET /usage/keys): one counter call for all of them. */
    async readKeyRequests(
      owner: Principal,
      keyIds: readonly string[],
    ): Promise<Map<string, { today: number; thisMinute: number }>> {
      if (keyIds.length === 0) return new Map();
      const nowMs = options.clock().getTime();
      const day = Math.floor(nowMs / dayMs);
      const minute = Math.floor(nowMs / 60_000);
      const counters = keyIds.flatMap((keyId) => [
        { key: keyRequestsCounter({ ...owner, keyId }, 'd', day), cost: 0, limit: countedOnly, resetAtMs: (day + 1) * dayMs },
        {
          key: keyRequestsCounter({ ...owner, keyId }, 'm', minute),
          cost: 0,
          limit: countedOnly,
          resetAtMs: (minute + 1) * 60_000,
        },
      ]);
      const decision = await options.cache.consumeQuotas(counters);
      return new Map(
        keyIds.map((keyId, index) => [
          keyId,
          { today: decision.counters[2 * index]?.used ?? 0, thisMinute: decision.counters[2 * index + 1]?.used ?? 0 },
        ]),
      );
    },

    /** Gives back quota spent on work that was refused: quota is spent only for accepted work. */
    /**
     * Once a request's answer is known, tells the thresholds of the route's quota it still reached
     * with `refused` of what it spent given back (those it reached only with work given back are not).
     */
    tellThresholdsKept(spent: SpentQuota, refused: number): void {
      if (spent.crossed.length === 0) return;
      tell(
        spent.crossed
          .map((crossed) => ({ ...crossed, used: crossed.used - refused }))
          .filter((crossed) => crossed.used * 100 >= crossed.limit * crossed.threshold),
      );
    },

    refund(refunds: readonly QuotaRefund[]): Promise<void> {
      return options.cache.refundQuotas(refunds);
    },

    /** Resolves once what was spent so far outlives this process (Cache.persist). */
    persistSpent(): Promise<void> {
      return options.cache.persist();
    },

    /** How long the oldest spending not yet outliving this process has waited for its write (the embedded form's journal). */
    unsavedForMs(): number {
      return options.cache.unsavedForMs();
    },
  };
}
export type RateLimiter = ReturnType<typeof createRateLimiter>;
