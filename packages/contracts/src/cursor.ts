import { HallmarkError } from './hallmark-error.ts';

/**
 * Cursor paging: a cursor is the sort key of the last row of a page, opaque to clients
 * (base64url of a JSON array of strings).
 */
export function encodeCursor(parts: readonly string[]): string {
  return Buffer.from(JSON.stringify(parts)).toString('base64url');
}

/** The parts of a cursor this API gave out; VALIDATION_ERROR for anything else. */
export function decodeCursor(text: string, partPatterns: readonly RegExp[]): string[] {
  try {
    const parts = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown;
    if (
      Array.isArray(parts) &&
      parts.length === partPatterns.length &&
      parts.every((part, index) => typeof part === 'string' && (partPatterns[index] as RegExp).test(part))
    ) {
      return parts as string[];
    }
  } catch {}
  throw new HallmarkError('VALIDATION_ERROR', 'Invalid request: cursor is not one this API gave out.', {
    fields: [{ field: 'cursor', in: 'querystring', message: 'is not a cursor from a previous page' }],
  });
}
