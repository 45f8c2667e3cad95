import { describe, expect, it } from 'vitest';
import { assessScan, distanceKm, type ScanFacts } from './risk.ts';

const now = Date.parse('2026-11-21T12:00:00Z');
const clean: ScanFacts = {
  signatureValid: true,
  nowMs: now,
  expiresAtMs: null,
  scansInWindow: 1,
  clientsInWindow: 1,
  reported: false,
  location: undefined,
  previousLocation: undefined,
};
const paris = { latitude: 48.8566, longitude: 2.3522 };
const newYork = { latitude: 40.7128, longitude: -74.006 };

describe('assessScan', () => {
  it('is AUTHENTIC with low risk when nothing fires', () => {
    expect(assessScan(clean)).toEqual({
      verdict: 'AUTHENTIC',
      confidence: 0.98,
      riskIndicators: [],
      riskLevel: 'low',
      scanPatternPassed: true,
    });
  });

  it('is COUNTERFEIT when the signature fails, whatever else', () => {
    expect(assessScan({ ...clean, signatureValid: false, reported: true })).toMatchObject({
      verdict: 'COUNTERFEIT',
      riskLevel: 'critical',
    });
  });

  it('flags EXCESSIVE_SCANS past the threshold (medium)', () => {
    expect(assessScan({ ...clean, scansInWindow: 20 }).verdict).toBe('AUTHENTIC');
    expect(assessScan({ ...clean, scansInWindow: 21 })).toMatchObject({
      verdict: 'SUSPICIOUS',
      riskIndicators: ['EXCESSIVE_SCANS'],
      riskLevel: 'medium',
      scanPatternPassed: false,
    });
  });

  it('flags GEOGRAPHIC_IMPOSSIBILITY for Paris → New York in an hour, not in a day (high)', () => {
    const anHourAgo = { ...paris, atMs: now - 3_600_000 };
    expect(assessScan({ ...clean, location: newYork, previousLocation: anHourAgo })).toMatchObject({
      riskIndicators: ['GEOGRAPHIC_IMPOSSIBILITY'],
      riskLevel: 'high',
    });
    expect(assessScan({ ...clean, location: newYork, previousLocation: { ...paris, atMs: now - 24 * 3_600_000 } }).verdict).toBe(
      'AUTHENTIC',
    );
    expect(
      assessScan({ ...clean, location: paris, previousLocation: { latitude: 48.86, longitude: 2.36, atMs: now } }).verdict,
    ).toBe('AUTHENTIC');
  });

  it('flags KNOWN_COUNTERFEIT_PATTERN when reported or scanned by many clients at once (critical)', () => {
    expect(assessScan({ ...clean, reported: true })).toMatchObject({
      riskIndicators: ['KNOWN_COUNTERFEIT_PATTERN'],
      riskLevel: 'critical',
    });
    expect(assessScan({ ...clean, clientsInWindow: 10 }).riskIndicators).toEqual(['KNOWN_COUNTERFEIT_PATTERN']);
  });

  it('flags EXPIRED_CODE once the expiry has passed (high), without failing the scan pattern', () => {
    expect(assessScan({ ...clean, expiresAtMs: now })).toMatchObject({
      verdict: 'SUSPICIOUS',
      riskIndicators: ['EXPIRED_CODE'],
      riskLevel: 'high',
      scanPatternPassed: true,
    });
    expect(assessScan({ ...clean, expiresAtMs: now + 1 }).verdict).toBe('AUTHENTIC');
  });
});

describe('distanceKm', () => {
  it('measures Paris to New York at about 5,837 km', () => {
    expect(Math.round(distanceKm(paris, newYork))).toBeGreaterThan(5_800);
    expect(Math.round(distanceKm(paris, newYork))).toBeLessThan(5_870);
    expect(distanceKm(paris, paris)).toBe(0);
  });
});
