import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { firstRoundedInteger } from './rounded-integers.ts';

describe('firstRoundedInteger', () => {
  it('finds a whole number JavaScript writes otherwise once read, with its path', () => {
    expect(firstRoundedInteger('{"evidence":{"certificateNo":90071992547409921}}')).toEqual({
      literal: '90071992547409921',
      path: 'evidence.certificateNo',
    });
    // 2^60 is a double, written back as 1152921504606847000.
    expect(firstRoundedInteger('{"items":[{"n":1},{"metadata":{"lot":[7,1152921504606846976]}}]}')).toEqual({
      literal: '1152921504606846976',
      path: 'items.1.metadata.lot.1',
    });
    expect(firstRoundedInteger('[-9007199254740993]')).toEqual({ literal: '-9007199254740993', path: '0' });
    expect(firstRoundedInteger(`{"big":1${'0'.repeat(400)}}`)?.path).toBe('big');
  });

  it('passes whole numbers written as JavaScript writes them, fractions, exponents and digits inside strings', () => {
    expect(firstRoundedInteger('{"a":90071992547409920,"b":9007199254740993.5,"c":1e21,"d":-0,"e":100000000000000000000}')).toBe(
      undefined,
    );
    expect(firstRoundedInteger('{"note":"90071992547409921","90071992547409921":1}')).toBe(undefined);
    expect(firstRoundedInteger('{"hash":"1234567890123456789a","n":[1,2,3]}')).toBe(undefined);
  });

  it('never flags what JSON.stringify writes, and flags a whole-number literal exactly when its double is written otherwise', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (value) => {
        expect(firstRoundedInteger(JSON.stringify({ value, list: [value, { value }] }))).toBe(undefined);
      }),
    );
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }), (value) => {
        const literal = String(value);
        const rounded = literal.replace('-', '').length >= 16 && String(Number(literal)) !== literal;
        expect(firstRoundedInteger(`{"x":[${literal}]}`)).toEqual(rounded ? { literal, path: 'x.0' } : undefined);
      }),
    );
  });
});
