import { describe, expect, it } from 'vitest';
import { bandColours, contrastRatio, defaultTextColour, minimumContrast } from './branding.ts';

describe('brand colours (WCAG 2.2 contrast)', () => {
  it('computes the WCAG ratio, rounded down', () => {
    expect(contrastRatio('#000000', '#ffffff')).toBe(21);
    expect(contrastRatio('#ffffff', '#ffffff')).toBe(1);
    // The well-known borderline grey: 4.48:1 on white, just under AA.
    expect(contrastRatio('#777777', '#ffffff')).toBe(4.47);
    expect(contrastRatio('#767676', '#ffffff')).toBe(4.54);
    // By hand: L(#0b3d91) = 0.2126·0.00335 + 0.7152·0.0467 + 0.0722·0.2831 ≈ 0.0546; 1.05 / 0.1046 ≈ 10.04.
    expect(contrastRatio('#0b3d91', '#ffffff')).toBeCloseTo(10.04, 1);
  });

  it('picks black or white text, whichever contrasts more, and every colour reaches AA with one of them', () => {
    expect(defaultTextColour('#ffff00')).toBe('#000000');
    expect(defaultTextColour('#0b3d91')).toBe('#ffffff');
    for (let value = 0; value < 0x1000000; value += 0x010307) {
      const colour = `#${value.toString(16).padStart(6, '0')}`;
      expect(contrastRatio(colour, defaultTextColour(colour))).toBeGreaterThanOrEqual(minimumContrast);
    }
  });

  it('never hands the page an illegible pair, even one stored before a check', () => {
    expect(bandColours(null, '#ffffff')).toBeNull();
    expect(bandColours('#0b3d91', null)).toEqual({ primary: '#0b3d91', text: '#ffffff' });
    expect(bandColours('#777777', '#888888')).toEqual({ primary: '#777777', text: defaultTextColour('#777777') });
  });
});
