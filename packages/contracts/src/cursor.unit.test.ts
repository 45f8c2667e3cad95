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
});
