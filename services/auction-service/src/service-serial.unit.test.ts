import { describe, expect, it } from 'vitest';
import { isValidServiceSerial, newServiceSerial } from './service-serial.ts';

describe('service serials', () => {
  it('are unique, well-formed and pass their check', () => {
    const serials = new Set(Array.from({ length: 5_000 }, newServiceSerial));
    expect(serials.size).toBe(5_000);
    for (const serial of serials) {
      expect(serial).toMatch(/^HM-[0-9A-HJKMNP-TV-Z]{5}-[0-9A-HJKMNP-TV-Z]{5}-[0-9A-HJKMNP-TV-Z]{5}$/);
      expect(serial.length).toBe(20);
      expect(isValidServiceSerial(serial)).toBe(true);
    }
  });

  it('catch every single mistyped character and swapped neighbours', () => {
    const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
    let swapsCaught = 0;
    let swaps = 0;
    for (let n = 0; n < 200; n += 1) {
      const serial = newServiceSerial();
      const positions = [...serial].map((c, i) => (c === '-' || i < 3 ? -1 : i)).filter((i) => i >= 0);
      for (const i of positions) {
        for (const replacement of alphabet) {
          if (replacement === serial[i]) continue;
          expect(isValidServiceSerial(serial.slice(0, i) + replacement + serial.slice(i + 1))).toBe(false);
        }
      }
      for (const i of positions.slice(0, -2)) {
        const j = i + 1;
        if (serial[j] === '-' || serial[i] === serial[j]) continue;
        swaps += 1;
        const swapped = serial.slice(0, i) + serial[j] + serial[i] + serial.slice(j + 1);
        if (!isValidServiceSerial(swapped)) swapsCaught += 1;
      }
    }
    expect(swapsCaught / swaps).toBeGreaterThan(0.95);
    expect(isValidServiceSerial('HM-AAAAA-AAAAA-AAAA')).toBe(false);
  });
});
