import { decodeCursor } from './cursor.ts';
import { HallmarkError } from './hallmark-error.ts';

// Keyset cursors over (a timestamptz, an id): the instant is PostgreSQL's own text of the last row's
// time (`created_at::text`), which the query casts back with `::timestamptz`. A pattern of its
// characters let through what the cast refuses ('2024-99-99 00:00:00+00', SQLSTATE 22008), and a
// 36-character pattern for a uuid let through 36 hyphens (22P02): each a 500 where a forged cursor
// is a 400 (SECURITY.md). So the parts are checked as values here, before they reach SQL.

/** A uuid as PostgreSQL writes it: lower-case hex, 8-4-4-4-12. */
export const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * `YYYY-MM-DD HH:MM:SS[.ffffff]±HH[:MM[:SS]]`: PostgreSQL's ISO text of a timestamptz; or
 * `YYYY-MM-DDTHH:MM:SS[.fff]Z`, as `Date.toISOString` writes it (the webhook lists' cursors).
 */
const instantText =
  /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,6})?(?:[+-](\d{2})(?::?(\d{2})(?::?(\d{2}))?)?|Z)$/;

const isLeapYear = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
const daysIn = (year: number, month: number) =>
  month === 2 ? (isLeapYear(year) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;

/**
 * Whether `text` is an instant PostgreSQL takes as a timestamptz and writes back the same way: a
 * real calendar day of years 1 to 9999 (there is no year 0), a time of day below 24:00, and an
 * offset within ±15:59:59 (PostgreSQL's limit).
 */
export function isInstantText(text: string): boolean {
  const match = instantText.exec(text);
  if (!match) return false;
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes, offsetSeconds] = Array.from(
    { length: 9 },
    (_, index) => Number(match[index + 1] ?? 0),
  ) as [number, number, number, number, number, number, number, number, number];
  return (
    year >= 1 &&
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysIn(year, month) &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59 &&
    offsetHours <= 15 &&
    offsetMinutes <= 59 &&
    offsetSeconds <= 59
  );
}

/**
 * The parts of a keyset cursor over (instant, id) this API gave out: the instant PostgreSQL's text
 * of a real timestamptz (isInstantText), the id matching `idPattern` (for a uuid, `uuidPattern`).
 * Throws VALIDATION_ERROR (field `cursor`) for anything else, as decodeCursor does.
 */
export function decodeInstantCursor(text: string, idPattern: RegExp): [at: string, id: string] {
  const [at, id] = decodeCursor(text, [/^[0-9 T:.+Z-]{19,40}$/, idPattern]) as [string, string];
  if (isInstantText(at)) return [at, id];
  throw new HallmarkError('VALIDATION_ERROR', 'Invalid request: cursor is not one this API gave out.', {
    fields: [{ field: 'cursor', in: 'querystring', message: 'is not a cursor from a previous page' }],
  });
}
