import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonCopy } from './json-copy.ts';

const throughText = (value: unknown) => {
  const text = JSON.stringify(value);
  return text === undefined ? undefined : JSON.parse(text);
};

describe('jsonCopy', () => {
  it('equals a copy through JSON text for any JSON value, and shares nothing with it', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const copied = jsonCopy(value);
        expect(copied).toStrictEqual(throughText(value));
        if (typeof value === 'object' && value !== null) expect(copied).not.toBe(value);
      }),
    );
  });

  it('equals a copy through JSON text for what JSON changes or drops', () => {
    fc.assert(
      fc.property(
        fc.anything({
          withDate: true,
          withNullPrototype: true,
          withSparseArray: true,
          withBoxedValues: true,
          withMap: true,
          withSet: true,
          withTypedArray: true,
        }),
        (value) => {
          expect(jsonCopy(value)).toStrictEqual(throughText(value));
        },
      ),
    );
    const odd = {
      at: new Date(0),
      gone: undefined,
      fn: () => 1,
      list: [undefined, () => 1, Number.NaN, Number.POSITIVE_INFINITY, -0, new Date(1)],
      bytes: Buffer.from('hi'),
      custom: { toJSON: () => 'custom' },
      nothing: { toJSON: () => undefined },
      [Symbol('s')]: 1,
    };
    expect(jsonCopy(odd)).toStrictEqual(throughText(odd));
    expect(Object.is((jsonCopy([-0]) as number[])[0], 0)).toBe(true);
    expect(jsonCopy(undefined)).toBeUndefined();
  });

  it('keeps an own __proto__ key a plain property, as JSON.parse does', () => {
    const value = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}');
    const copied = jsonCopy(value) as Record<string, unknown>;
    expect(Object.getPrototypeOf(copied)).toBe(Object.prototype);
    expect(Object.keys(copied)).toEqual(['__proto__', 'a']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('throws where JSON.stringify throws: a bigint, a cycle', () => {
    expect(() => jsonCopy({ n: 1n })).toThrow(TypeError);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => jsonCopy(cycle)).toThrow(TypeError);
  });
});
