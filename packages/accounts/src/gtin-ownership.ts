import type { Environment } from '@hallmark/contracts';

/** A claim on identifiers: one GTIN-14, or a GS1 Company Prefix. */
export interface GtinClaimTarget {
  kind: 'gtin' | 'prefix';
  value: string;
}

export const shortestPrefix = 4;
export const longestPrefix = 12;

/**
 * The claim values that could cover a GTIN-14: the GTIN itself and every company prefix it carries
 * (GS1 Company Prefixes sit right after the indicator digit and are 4 to 12 digits long).
 */
export function claimValuesCovering(gtin: string): string[] {
  const values = [gtin];
  for (let length = shortestPrefix; length <= longestPrefix; length++) values.push(gtin.slice(1, 1 + length));
  return values;
}

/** True when the claim covers the GTIN. */
export function claimCovers(claim: GtinClaimTarget, gtin: string): boolean {
  return claim.kind === 'gtin' ? claim.value === gtin : gtin.slice(1).startsWith(claim.value);
}

/** True when some GTIN is covered by both claims. */
export function claimsOverlap(a: GtinClaimTarget, b: GtinClaimTarget): boolean {
  if (a.kind === 'gtin') return claimCovers(b, a.value);
  if (b.kind === 'gtin') return claimCovers(a, b.value);
  return a.value.startsWith(b.value) || b.value.startsWith(a.value);
}

/** The environments a claim covers: a live claim covers both, a test claim the test environment only. */
export function environmentsCovered(environment: Environment): Environment[] {
  return environment === 'live' ? ['live', 'test'] : ['test'];
}
