import type { Tier } from '@hallmark/contracts';

export interface TierLimits {
  /** Codes per day (a batch counts each item); null: unlimited. */
  generatePerDay: number | null;
  /** Verifications per day; null: unlimited. */
  verifyPerDay: number | null;
  /** Requests per second, whatever the route. */
  requestsPerSecond: number;
}

/**
 * The spec's daily quotas by tier, and burst limits (ours: not in the spec). Every limit is the
 * account's in one environment, shared by all its keys there (issue #16: the spec said per key,
 * which let a tenant multiply its quota by minting keys).
 */
export const tierLimits: Readonly<Record<Tier, TierLimits>> = {
  free: { generatePerDay: 100, verifyPerDay: 1_000, requestsPerSecond: 20 },
  starter: { generatePerDay: 1_000, verifyPerDay: 10_000, requestsPerSecond: 200 },
  enterprise: { generatePerDay: null, verifyPerDay: null, requestsPerSecond: 50_000 },
};

/** The test environment: 100 requests a day in all, across the account's test keys, whatever the tier (spec, Limits 3). */
export const testKeyRequestsPerDay = 100;
