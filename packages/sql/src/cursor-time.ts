/**
 * Lists page newest first on (a time column, id), and their cursors carry the time as microseconds
 * since the epoch (exact: timestamptz holds microseconds). A page must compare and order on the
 * column itself, which the owner's index holds: compared as a value computed from the column, a
 * page of one read and sorted every row of the owner (50,000 links: ~110 ms a page, here).
 */

/** SQL: the column as microseconds since the epoch, as text (what a cursor carries). */
export const cursorMicroseconds = (column: string): string => `(extract(epoch FROM ${column}) * 1000000)::bigint::text`;

/** SQL: a cursor's microseconds (the bigint parameter, e.g. `$4`) as the timestamptz they name, exactly. */
export const cursorTime = (parameter: string): string =>
  `('epoch'::timestamptz + ${parameter}::bigint * interval '1 microsecond')`;

/**
 * A cursor's microseconds as decodeCursor checks them: at most 17 digits (before the year 5138).
 * More than PostgreSQL's interval arithmetic takes (cursorTime) was a 500 "interval out of range"
 * for a forged cursor of 20 digits; it is a 400 like any cursor the API did not give out.
 */
export const cursorMicrosecondsPattern = /^\d{1,17}$/;
