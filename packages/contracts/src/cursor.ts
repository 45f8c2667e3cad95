import { HallmarkError } from './hallmark-error.ts';

/**
 * Cursor paging: a cursor is the sort key of the last row of a page, opaque to clients
 * (base64url of a JSON array of strings).
 */
export function encodeCursor(parts: readonly string[]): string {
  return Buffer.from(JSON.stringify(parts)).toString('base64url');
}

/** Cursors this API gives out are short; a longer text is refused before it is decoded. */
const maxCursorLength = 512;
/** The largest PostgreSQL bigint: numeric parts (microsecond sort keys) are compared as one. */
const maxBigint = 9_223_372_036_854_775_807n;
// U+0000 (PostgreSQL refuses it in text) and lone UTF-16 surrogates.
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is what this looks for
const unstorableText = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Whatever a caller's pattern allows, a part must be text the database can compare: no NUL or lone
 * surrogate, and digits that fit a bigint (a 20-digit "timestamp" made the query fail with 22003).
 */
function isStorablePart(part: string): boolean {
  if (part.length > 200 || unstorableText.test(part)) return false;
  return !/^\d+$/.test(part) || BigInt(part) <= maxBigint;
}

/** The parts of a cursor this API gave out; VALIDATION_ERROR for anything else. */
export function decodeCursor(text: string, partPatterns: readonly RegExp[]): string[] {
  try {
    const parts =
      text.length <= maxCursorLength ? (JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown) : undefined;
    if (
      Array.isArray(parts) &&
      parts.length === partPatterns.length &&
      parts.every((part, index) => typeof part === 'string' && isStorablePart(part) && (partPatterns[index] as RegExp).test(part))
    ) {
      return parts as string[];
    }
  } catch {}
  throw new HallmarkError('VALIDATION_ERROR', 'Invalid request: cursor is not one this API gave out.', {
    fields: [{ field: 'cursor', in: 'querystring', message: 'is not a cursor from a previous page' }],
  });
}
