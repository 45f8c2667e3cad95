import { type AuthenticatedKey, testKeyRequestsPerDay, tierLimits } from '@hallmark/accounts';
import type { Cache, CounterState, QuotaCounter, QuotaDecision } from '@hallmark/cache';
import type { QuotaRule } from '@hallmark/contracts';

export interface RateLimitOutcome {
  allowed: boolean;
  /** What X-RateLimit-Limit/Remaining/Reset report: the refusing counter, else the tightest daily one, else the burst. */
  reported: CounterState;
  /** Seconds until the refusing counter's window ends (Retry-After), when refused. */
  retryAfterSeconds?: number;
  /** Which limit refused the request. */
  refusedBy?: CounterName;
}

type CounterName =
  | 'requests-per-second'
  | 'requests-per-second-per-address'
  | 'test-key-requests-per-day'
  | 'generate-per-day'
  | 'verify-per-day';

const dayMs = 86_400_000;

/** A per-key decision as the response reports it: the refusing counter, else the tightest daily one, else the burst. */
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
  let reported = decision.counters[0] as CounterState;
  for (let index = 1; index < decision.counters.length; index++) {
    const daily = decision.counters[index] as CounterState;
    if (index === 1 || daily.remaining < reported.remaining) reported = daily;
  }
  return { allowed: true, reported };
}

/** A per-address decision (public routes): one counter, one second. */
function addressOutcomeOf(decision: QuotaDecision): RateLimitOutcome {
  const state = decision.counters[0] as CounterState;
  return decision.allowed
    ? { allowed: true, reported: state }
    : { allowed: false, reported: state, retryAfterSeconds: 1, refusedBy: 'requests-per-second-per-address' };
}

/**
 * Per-key limits, spent in one atomic call per request: the tier's burst per second, the test
 * keys' 100 requests a day, and the tier's daily generate or verify quota (a batch spends one per
 * item). Daily windows end at 00:00 UTC. All or nothing: a refused request spends nothing.
 */
export function createRateLimiter(options: { cache: Cache; clock: () => Date; publicPerSecond?: number }) {
  const publicPerSecond = options.publicPerSecond ?? 10;
  return {
    /**
     * Public (keyless) routes: a per-second limit per client address. Behind a proxy, set fastify's
     * trustProxy so the address is the client's, not the proxy's.
     */
    spendForAddress(address: string): RateLimitOutcome | Promise<RateLimitOutcome> {
      const nowMs = options.clock().getTime();
      const second = Math.floor(nowMs / 1000);
      const counter = { key: `rl:{ip:${address}}:s:${second}`, cost: 1, limit: publicPerSecond, resetAtMs: (second + 1) * 1000 };
      const decision = options.cache.consumeQuotas([counter]);
      return decision instanceof Promise ? decision.then(addressOutcomeOf) : addressOutcomeOf(decision);
    },

    /** Answers at once when the counters do (memory), else with a promise (Redis). */
    spend(key: AuthenticatedKey, rule: QuotaRule | undefined, items: number): RateLimitOutcome | Promise<RateLimitOutcome> {
      const nowMs = options.clock().getTime();
      const second = Math.floor(nowMs / 1000);
      const day = Math.floor(nowMs / dayMs);
      const endOfDayMs = (day + 1) * dayMs;
      // The {key id} hash tag keeps one key's counters in one Redis Cluster slot, as a script needs.
      const prefix = `rl:{${key.keyId}}`;
      const limits = tierLimits[key.tier];
      const names: CounterName[] = ['requests-per-second'];
      const counters: QuotaCounter[] = [
        { key: `${prefix}:s:${second}`, cost: 1, limit: limits.requestsPerSecond, resetAtMs: (second + 1) * 1000 },
      ];
      if (key.environment === 'test') {
        names.push('test-key-requests-per-day');
        counters.push({ key: `${prefix}:d:${day}:requests`, cost: 1, limit: testKeyRequestsPerDay, resetAtMs: endOfDayMs });
      }
      const routeLimit = rule ? (rule.kind === 'generate' ? limits.generatePerDay : limits.verifyPerDay) : null;
      if (rule && routeLimit !== null) {
        names.push(rule.kind === 'generate' ? 'generate-per-day' : 'verify-per-day');
        counters.push({
          key: `${prefix}:d:${day}:${rule.kind}`,
          cost: rule.per === 'item' ? items : 1,
          limit: routeLimit,
          resetAtMs: endOfDayMs,
        });
      }
      const decision = options.cache.consumeQuotas(counters);
      // In memory the decision is here already: no promise, and no closure made for it.
      return decision instanceof Promise
        ? decision.then((settled) => outcomeOf(settled, names, nowMs))
        : outcomeOf(decision, names, nowMs);
    },
  };
}
export type RateLimiter = ReturnType<typeof createRateLimiter>;
