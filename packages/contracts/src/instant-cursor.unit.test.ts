import { describe, expect, it } from 'vitest';
import { encodeCursor } from './cursor.ts';
import { decodeInstantCursor, isInstantText, uuidPattern } from './instant-cursor.ts';

const scanId = '0191f2a4-7b3c-7d00-8a1b-0123456789ab';
const refused = expect.objectContaining({
  code: 'VALIDATION_ERROR',
  details: { fields: [{ field: 'cursor', in: 'querystring', message: 'is not a cursor from a previous page' }] },
});

describe('instant cursors', () => {
  it.each([
    '2024-05-01 12:34:56.123456+00',
    '2024-05-01 12:34:56+00',
    '2024-02-29 23:59:59.9+05:30',
    '0001-01-01 00:00:00-15:59:59',
    '9999-12-31 23:59:59.999999+15',
  ])('take PostgreSQL’s text of a timestamptz: %s', (at) => {
    expect(isInstantText(at)).toBe(true);
    expect(decodeInstantCursor(encodeCursor([at, scanId]), uuidPattern)).toEqual([at, scanId]);
  });

  // Each once passed the character pattern, then failed the ::timestamptz cast (22008, 22007) as a 500.
  it.each([
    ['a month 99', '2024-99-99 00:00:00+00'],
    ['year 0', '0000-01-01 00:00:00+00'],
    ['30 February', '2024-02-30 00:00:00+00'],
    ['29 February of a common year', '2023-02-29 00:00:00+00'],
    ['31 April', '2024-04-31 00:00:00+00'],
    ['hour 24', '2024-01-01 24:00:00+00'],
    ['second 60', '2024-01-01 23:59:60+00'],
    ['an offset of 16 hours', '2024-01-01 00:00:00+16'],
    ['no offset', '2024-01-01 00:00:00'],
    ['digits only', '2024010100000000000'],
    ['signs and colons', '--------::::::::++++'],
  ])('refuse %s with VALIDATION_ERROR naming the cursor', (_, at) => {
    expect(isInstantText(at)).toBe(false);
    expect(() => decodeInstantCursor(encodeCursor([at, scanId]), uuidPattern)).toThrow(refused);
  });

  it.each([
    ['36 hyphens', '-'.repeat(36)],
    ['hex without its hyphens in place', '0191f2a47b3c-7d00-8a1b-0123456789ab-'],
    ['upper case', scanId.toUpperCase()],
  ])('refuse an id that is not a uuid: %s', (_, id) => {
    expect(() => decodeInstantCursor(encodeCursor(['2024-05-01 12:34:56+00', id]), uuidPattern)).toThrow(refused);
  });

  it('check the id against the caller’s pattern and keep decodeCursor’s checks', () => {
    const block = /^blk_[0-9a-f]{1,40}$/;
    expect(decodeInstantCursor(encodeCursor(['2024-05-01 12:34:56+00', 'blk_0a']), block)).toEqual([
      '2024-05-01 12:34:56+00',
      'blk_0a',
    ]);
    expect(() => decodeInstantCursor(encodeCursor(['2024-05-01 12:34:56+00', 'blk_0\u0000']), block)).toThrow(refused);
    expect(() => decodeInstantCursor('garbage!', block)).toThrow(refused);
  });
});
