import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { firstInexactNumber, firstRoundedInteger } from './rounded-integers.ts';

/** The value of what JavaScript writes for a whole double (`123…`, or `1.5e+300`), worked out apart. */
function writtenValue(literal: string): bigint {
  const read = Number(literal);
  const [mantissa = '', exponent = '0'] = String(read).split('e');
  const [whole = '', fraction = ''] = mantissa.replace('-', '').split('.');
  const value = BigInt(`${whole}${fraction}`) * 10n ** BigInt(Number(exponent) - fraction.length);
  return read < 0 ? -value : value;
}

describe('firstRoundedInteger', () => {
  it('finds a whole number a double gives back as another, however it is spelled, with its path', () => {
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
    for (const spelling of ['90071992547409921.0', '9.0071992547409921e16', '9007199254.7409921e7', '900719925474099210e-1']) {
      expect(firstRoundedInteger(`{"n":${spelling}}`), spelling).toEqual({ literal: spelling, path: 'n' });
    }
    expect(firstRoundedInteger('{"big":100000000000000000000001}')?.path).toBe('big');
  });

  it('passes numbers a double gives back as written, fractions, and digits inside strings', () => {
    expect(
      firstRoundedInteger(
        '{"a":90071992547409920,"b":9007199254740993.5,"c":1e21,"d":-0,"e":100000000000000000000,"f":1000000000000000000000,"g":1.5e300,"h":12345678901234567e-1}',
      ),
    ).toBe(undefined);
    expect(firstRoundedInteger('{"note":"90071992547409921","90071992547409921":1}')).toBe(undefined);
    expect(firstRoundedInteger('{"hash":"1234567890123456789a","n":[1,2,3]}')).toBe(undefined);
  });

  it('never flags what JSON.stringify writes, and flags a whole number exactly when its double is written as another', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (value) => {
        expect(firstRoundedInteger(JSON.stringify({ value, list: [value, { value }] }))).toBe(undefined);
      }),
    );
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }), (value) => {
        const plain = String(value);
        const rounded = (value >= 2n ** 53n || value <= -(2n ** 53n)) && writtenValue(plain) !== value;
        for (const literal of [plain, `${plain}.0`, `${plain}e0`, `${plain}0e-1`]) {
          expect(firstRoundedInteger(`{"x":[${literal}]}`), literal).toEqual(rounded ? { literal, path: 'x.0' } : undefined);
        }
      }),
    );
  });
});

describe('firstInexactNumber', () => {
  it('never flags what JSON.stringify writes', () => {
    fc.assert(
      fc.property(
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }),
        (value, whole) => {
          const written = JSON.stringify({ value, list: [value, { value }], whole: Number(whole) });
          expect(firstInexactNumber(written), written).toBe(undefined);
        },
      ),
    );
  });

  it('flags a number whose value is not its double’s, with its path; passes another spelling of the same value', () => {
    // An attack on the offline audit (2026-12-06): `…921.000000001` hashed as the genuine …920.
    for (const literal of [
      '90071992547409921.000000001',
      '90071992547409921',
      '90071992547409920.4',
      '0.10000000000000001',
      '1e999',
      '1e-400',
    ]) {
      expect(firstInexactNumber(`{"evidence":{"n":[1,${literal}]}}`), literal).toEqual({ literal, path: 'evidence.n.1' });
    }
    for (const literal of [
      '1.0',
      '1E2',
      '-0',
      '1e+21',
      '1e21',
      '100e-2',
      '9.007199254740992e16',
      '90071992547409920.000',
      '0.1',
    ]) {
      expect(firstInexactNumber(`{"n":${literal}}`), literal).toBe(undefined);
    }
  });
});
