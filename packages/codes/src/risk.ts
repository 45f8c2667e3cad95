/** Thresholds of the risk rules; the account's compliance config will carry its own (issue #6). */
export interface RiskRules {
  /** More than this many scans in the window is EXCESSIVE_SCANS (a client's repeats count once). */
  maxScansPerWindow: number;
  scanWindowMinutes: number;
  /**
   * A client scanning the same code again within this many seconds counts once. An hour by
   * default, the scan window: one address (a caller scanning every 11 s, or a script viewing the
   * resolver page) cannot make a genuine code EXCESSIVE_SCANS on its own; it takes more than
   * maxScansPerWindow clients.
   */
  repeatWindowSeconds: number;
  /** Moving faster than this between two located scans is GEOGRAPHIC_IMPOSSIBILITY. */
  maxTravelKmh: number;
  /** This many distinct clients within the window looks like a cloned label: KNOWN_COUNTERFEIT_PATTERN. */
  clonedLabelClients: number;
  clonedLabelWindowMinutes: number;
}

export const defaultRiskRules: RiskRules = {
  maxScansPerWindow: 20,
  scanWindowMinutes: 60,
  repeatWindowSeconds: 3_600,
  maxTravelKmh: 900,
  clonedLabelClients: 10,
  clonedLabelWindowMinutes: 10,
};

export type RiskIndicator = 'EXCESSIVE_SCANS' | 'GEOGRAPHIC_IMPOSSIBILITY' | 'KNOWN_COUNTERFEIT_PATTERN' | 'EXPIRED_CODE';
export type RiskLevel = 'low' | 'medium' | 'high' | 'critical';
export type Verdict = 'AUTHENTIC' | 'COUNTERFEIT' | 'SUSPICIOUS';

export interface ScanFacts {
  signatureValid: boolean;
  nowMs: number;
  /** When the code expires (test codes after 24 h, or its AI 17 date); null: never. */
  expiresAtMs: number | null;
  scansInWindow: number;
  clientsInWindow: number;
  reported: boolean;
  /**
   * The signature verifies under a signing key the service holds, yet the service issued no code of
   * the item: only a key that got out signs that (docs/SECURITY.md, "A leaked signing key").
   */
  unissued?: boolean;
  location: { latitude: number; longitude: number } | undefined;
  previousLocation: { latitude: number; longitude: number; atMs: number } | undefined;
}

export interface RiskAssessment {
  verdict: Verdict;
  /** How sure the verdict is, 0 to 1. */
  confidence: number;
  riskIndicators: RiskIndicator[];
  riskLevel: RiskLevel;
  /** False when a scan-history rule fired (excessive, geographic, cloned or reported). */
  scanPatternPassed: boolean;
}

const earthRadiusKm = 6371;

/** Great-circle distance (haversine), in kilometres. */
export function distanceKm(a: { latitude: number; longitude: number }, b: { latitude: number; longitude: number }): number {
  const radians = (degrees: number) => (degrees * Math.PI) / 180;
  const dLat = radians(b.latitude - a.latitude);
  const dLon = radians(b.longitude - a.longitude);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(radians(a.latitude)) * Math.cos(radians(b.latitude)) * Math.sin(dLon / 2) ** 2;
  return 2 * earthRadiusKm * Math.asin(Math.min(1, Math.sqrt(h)));
}

/**
 * The verdict of one scan (docs/API.md, "Verification"): COUNTERFEIT when the signature fails under
 * every candidate key; otherwise SUSPICIOUS when a risk rule fires, AUTHENTIC when none does.
 * Risk level: critical for a known counterfeit pattern, high for an impossible journey or an
 * expired code, medium for excessive scans, low otherwise.
 */
export function assessScan(facts: ScanFacts, rules: RiskRules = defaultRiskRules): RiskAssessment {
  if (!facts.signatureValid) {
    return { verdict: 'COUNTERFEIT', confidence: 0.99, riskIndicators: [], riskLevel: 'critical', scanPatternPassed: true };
  }
  const indicators: RiskIndicator[] = [];
  if (facts.scansInWindow > rules.maxScansPerWindow) indicators.push('EXCESSIVE_SCANS');
  if (facts.location && facts.previousLocation) {
    const km = distanceKm(facts.previousLocation, facts.location);
    const hours = Math.max(0, facts.nowMs - facts.previousLocation.atMs) / 3_600_000;
    // 50 km of slack covers GPS error and a neighbouring city.
    if (km > 50 && (hours === 0 || km / hours > rules.maxTravelKmh)) indicators.push('GEOGRAPHIC_IMPOSSIBILITY');
  }
  if (facts.reported || facts.unissued || facts.clientsInWindow >= rules.clonedLabelClients) {
    indicators.push('KNOWN_COUNTERFEIT_PATTERN');
  }
  if (facts.expiresAtMs !== null && facts.expiresAtMs <= facts.nowMs) indicators.push('EXPIRED_CODE');

  const riskLevel: RiskLevel = indicators.includes('KNOWN_COUNTERFEIT_PATTERN')
    ? 'critical'
    : indicators.includes('GEOGRAPHIC_IMPOSSIBILITY') || indicators.includes('EXPIRED_CODE')
      ? 'high'
      : indicators.includes('EXCESSIVE_SCANS')
        ? 'medium'
        : 'low';
  const confidenceByLevel: Record<RiskLevel, number> = { low: 0.98, medium: 0.6, high: 0.75, critical: 0.9 };
  return {
    verdict: indicators.length === 0 ? 'AUTHENTIC' : 'SUSPICIOUS',
    confidence: confidenceByLevel[riskLevel],
    riskIndicators: indicators,
    riskLevel,
    scanPatternPassed: !indicators.some((indicator) => indicator !== 'EXPIRED_CODE'),
  };
}
