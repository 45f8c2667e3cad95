import { type Static, Type } from '@sinclair/typebox';
export const ResponseMeta = Type.Object({
  requestId: Type.String(),
  timestamp: Type.String({ format: 'date-time' }),
});

/** The error envelope of every failure: `{ error: { code, message, details? }, meta }`. */
export const ErrorEnvelope = Type.Object({
  error: Type.Object({
    code: Type.String(),
    message: Type.String(),
    details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  }),
  meta: ResponseMeta,
});
export type ErrorEnvelope = Static<typeof ErrorEnvelope>;

/** Cursor paging, as the product decisions set it for every list (docs/INTERFACE.md). */
export const Pagination = Type.Object({
  limit: Type.Integer(),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
  hasMore: Type.Boolean(),
});
export type Pagination = Static<typeof Pagination>;

/**
 * Characters text others are shown may not hold: control characters (escape sequences, line
 * breaks, tabs), which a terminal would act on, and the characters that change text direction
 * (U+061C, U+200E/F, U+202A–U+202E, U+2066–U+2069), which would reorder what a page or a listing
 * shows. As the inside of a regular-expression character class.
 */
const unprintableCharacters = '\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069';

/**
 * A `pattern` for text others are shown (key and account names, webhook descriptions, a brand's
 * display name): none of the characters above. The console renders text as text and the CLI
 * escapes what it prints anyway; this keeps such text from being stored at all.
 */
export const printableTextPattern = `^[^${unprintableCharacters}]*$`;

/** The same, and not blank (an owner as an auction house names it). */
export const printableNonBlankTextPattern = `^(?=.*\\S)[^${unprintableCharacters}]+$`;

/**
 * A `pattern` for an http(s) URL others are shown (a webhook endpoint's): none of the characters
 * above (a URL parser drops tabs and line breaks, so the address shown would not be the one used;
 * a direction override would reorder the console's own words around it).
 */
export const printableHttpUrlPattern = `^[Hh][Tt][Tt][Pp][Ss]?://[^${unprintableCharacters}]*$`;

const printableText = new RegExp(printableTextPattern);

/** Whether `text` matches {@link printableTextPattern}, for checks made outside a schema. */
export const isPrintableText = (text: string): boolean => printableText.test(text);
