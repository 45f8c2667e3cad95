import { describe, expect, it } from 'vitest';
import { claimCovers, claimsOverlap, claimValuesCovering, environmentsCovered } from './gtin-ownership.ts';

describe('GTIN ownership rules', () => {
  it('a GTIN is covered by itself and by the company prefixes after its indicator digit', () => {
    const values = claimValuesCovering('09506000134352');
    expect(values[0]).toBe('09506000134352');
    expect(values).toContain('9506');
    expect(values).toContain('950600013435');
    expect(values).not.toContain('0950');
    expect(values).toHaveLength(10);
  });

  it('a prefix covers the GTINs whose digits after the indicator begin with it', () => {
    expect(claimCovers({ kind: 'prefix', value: '9506000' }, '09506000134352')).toBe(true);
    expect(claimCovers({ kind: 'prefix', value: '9506000' }, '19506000134359')).toBe(true);
    expect(claimCovers({ kind: 'prefix', value: '9506001' }, '09506000134352')).toBe(false);
    // The indicator digit is not part of a company prefix.
    expect(claimCovers({ kind: 'prefix', value: '0950' }, '09506000134352')).toBe(false);
    expect(claimCovers({ kind: 'gtin', value: '09506000134352' }, '09506000134352')).toBe(true);
    expect(claimCovers({ kind: 'gtin', value: '09506000134352' }, '09506000134369')).toBe(false);
  });

  it('claims overlap when some GTIN is covered by both', () => {
    expect(claimsOverlap({ kind: 'prefix', value: '9506' }, { kind: 'prefix', value: '950600' })).toBe(true);
    expect(claimsOverlap({ kind: 'prefix', value: '950600' }, { kind: 'prefix', value: '9506' })).toBe(true);
    expect(claimsOverlap({ kind: 'prefix', value: '950601' }, { kind: 'prefix', value: '950600' })).toBe(false);
    expect(claimsOverlap({ kind: 'gtin', value: '09506000134352' }, { kind: 'prefix', value: '95060' })).toBe(true);
    expect(claimsOverlap({ kind: 'prefix', value: '95060' }, { kind: 'gtin', value: '09506000134352' })).toBe(true);
    expect(claimsOverlap({ kind: 'gtin', value: '09506000134352' }, { kind: 'gtin', value: '09506000134352' })).toBe(true);
    expect(claimsOverlap({ kind: 'gtin', value: '09506000134352' }, { kind: 'gtin', value: '09506000134369' })).toBe(false);
  });

  it('a live claim covers both environments, a test claim only the test one', () => {
    expect(environmentsCovered('live')).toEqual(['live', 'test']);
    expect(environmentsCovered('test')).toEqual(['test']);
  });
});
