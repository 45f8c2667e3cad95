import type { Tier } from '@hallmark/contracts';

export interface TierLimits {
  /** Codes per day (a batch counts each item); null: unlimited. */
  generatePerDay: number | null;
  /** Verifications per day; null: unlimited. */
  verifyPerDay: number | null;
  /** Requests per second per key, whatever the route. */
  requestsPerSecond: number;
}

/** The spec's daily quotas by tier, and burst limits (ours: not in the spec). */
export const tierLimits: Readonly<Record<Tier, TierLimits>> = {
  free: { generatePerDay: 100, verifyPerDay: 1_000, requestsPerSecond: 20 },
  starter: { generatePerDay: 1_000, verifyPerDay: 10_000, requestsPerSecond: 200 },
  enterprise: { generatePerDay: null, verifyPerDay: null, requestsPerSecond: 50_000 },
};

/** Test keys: 100 requests a day in all, whatever the tier (spec, Limits 3). */
export const testKeyRequestsPerDay = 100;
