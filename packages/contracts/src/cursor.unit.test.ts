import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from './cursor.ts';

describe('cursors', () => {
  const patterns = [/^\d+$/, /^[a-z_0-9]+$/];

  it('round-trip their parts', () => {
    expect(decodeCursor(encodeCursor(['1763725000123456', 'sch_ab12']), patterns)).toEqual(['1763725000123456', 'sch_ab12']);
  });

  it.each([
    ['not base64 JSON', 'garbage!'],
    ['the wrong number of parts', encodeCursor(['1'])],
    ['a part of the wrong form', encodeCursor(['x', 'sch_1'])],
    ['not strings', Buffer.from('[1, 2]').toString('base64url')],
  ])('refuse %s with VALIDATION_ERROR', (_, cursor) => {
    expect(() => decodeCursor(cursor, patterns)).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR' }));
  });

  // Patterns as loose as the list handlers' own ([/^\d{1,20}$/, /^.{1,100}$/]): what no pattern
  // says, the database would fail on (22003, 22021), so decodeCursor refuses it whatever the pattern.
  it.each([
    ['a number beyond a PostgreSQL bigint', encodeCursor(['99999999999999999999', 'sch_1'])],
    ['a part with U+0000', encodeCursor(['1', 'sch_\u0000'])],
    ['a part with a lone surrogate', encodeCursor(['1', 'sch_\ud800'])],
    ['a very long text', encodeCursor(['1', 'x'.repeat(100_000)])],
  ])('refuse %s whatever the caller’s patterns allow', (_, cursor) => {
    expect(() => decodeCursor(cursor, [/^\d{1,20}$/, /^.*$/])).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR' }));
  });

  it('takes the largest bigint', () => {
    expect(decodeCursor(encodeCursor(['9223372036854775807', 'x']), [/^\d{1,20}$/, /^.*$/])).toEqual([
      '9223372036854775807',
      'x',
    ]);
  });
});
