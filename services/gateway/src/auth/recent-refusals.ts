import type { CounterState } from '@hallmark/cache';
import type { QuotaRule } from '@hallmark/contracts';

/** A refusal this replica saw, and until when any request of the account it names is refused the same way. */
export interface RecentRefusal {
  refusedBy: string;
  reported: CounterState;
  untilMs: number;
  /** When it was noted: a clock stepped back before it lets it go (else it would hold for the step's length). */
  notedAtMs: number;
  /** A daily quota with some left (a smaller request would have passed): held only for the rest of its second. */
  partial: boolean;
}

/** What a refusal is remembered under: the account's environment, and the counter that refused. */
type Budget = 'burst' | 'test-requests' | 'generate' | 'verify';

const budgetOf: Record<string, Budget> = {
  'requests-per-second': 'burst',
  'test-key-requests-per-day': 'test-requests',
  'generate-per-day': 'generate',
  'verify-per-day': 'verify',
};

/** A daily counter's refusal is looked at again this often: a refund elsewhere may have freed some. */
const dailyRecheckMs = 1_000;

/** More accounts than this refused at once: the ones whose refusal ended are let go first. */
const maxAccounts = 10_000;

/**
 * The counters this replica saw refuse an account, while they certainly still would. A request
 * whose limits are spent only once its body is read (a batch, a request with an Idempotency-Key)
 * is refused by these before its body is read, so an account past its limits cannot have the
 * gateway read and parse a large body for every refusal: a burst refused until its second ends,
 * the test environment's daily requests until the day ends, a daily generate or verify quota with
 * nothing left for a second at a time (a refund may give some back). A daily quota that refused a
 * request larger than what it has left holds the rest of that second only, with a Retry-After of a
 * second: else an account could keep a little quota and have every over-large batch read and
 * parsed, at any rate, since a refused request spends nothing (nor does one refused here).
 */
export function createRecentRefusals() {
  const byAccount = new Map<string, Map<Budget, RecentRefusal>>();
  let lastSweepMs = Number.NEGATIVE_INFINITY;
  const accountOf = (owner: { accountId: string; environment: string }) => `${owner.accountId}:${owner.environment}`;

  const letGoEnded = (nowMs: number) => {
    for (const [account, refusals] of byAccount) {
      for (const [budget, refusal] of refusals) if (refusal.untilMs <= nowMs) refusals.delete(budget);
      if (refusals.size === 0) byAccount.delete(account);
    }
  };

  return {
    /** Notes a refusal by one of the account's counters. */
    note(owner: { accountId: string; environment: string }, refusedBy: string, reported: CounterState, nowMs: number): void {
      const budget = budgetOf[refusedBy];
      if (!budget) return;
      const daily = budget === 'generate' || budget === 'verify';
      const partial = daily && reported.remaining > 0;
      // Full: let go of ended refusals, at most once a second (else a sweep of every entry on each refusal).
      if (byAccount.size >= maxAccounts && nowMs - lastSweepMs >= 1_000) {
        lastSweepMs = nowMs;
        letGoEnded(nowMs);
      }
      if (byAccount.size >= maxAccounts) return;
      const untilMs = partial
        ? Math.min(reported.resetAtMs, (Math.floor(nowMs / 1000) + 1) * 1000)
        : daily
          ? Math.min(reported.resetAtMs, nowMs + dailyRecheckMs)
          : reported.resetAtMs;
      const account = accountOf(owner);
      let refusals = byAccount.get(account);
      if (!refusals) byAccount.set(account, (refusals = new Map()));
      refusals.set(budget, { refusedBy, reported, untilMs, notedAtMs: nowMs, partial });
    },

    /** A refusal that still holds for a request of this account and route, if any. */
    holding(
      owner: { accountId: string; environment: string },
      rule: QuotaRule | undefined,
      nowMs: number,
    ): RecentRefusal | undefined {
      const refusals = byAccount.get(accountOf(owner));
      if (!refusals) return undefined;
      const budgets: Budget[] = ['burst', 'test-requests'];
      if (rule) budgets.push(rule.kind);
      for (const budget of budgets) {
        const refusal = refusals.get(budget);
        if (!refusal || refusal.untilMs <= nowMs) continue;
        if (nowMs < refusal.notedAtMs) {
          // The clock stepped back: the counter that refused is asked again, in the window it is now in.
          refusals.delete(budget);
          continue;
        }
        // Some quota is left: a request of one unit (a single generate or verify) may fit it.
        if (refusal.partial && rule?.per !== 'item') continue;
        return refusal;
      }
      return undefined;
    },
  };
}
export type RecentRefusals = ReturnType<typeof createRecentRefusals>;
