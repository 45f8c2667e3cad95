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
 * breaks, tabs) and the line and paragraph separators U+2028/U+2029, which a terminal or a page
 * would act on, and the characters that change text direction (U+061C, U+200E/F, U+202A–U+202E,
 * U+2066–U+2069), which would reorder what a page or a listing shows. As the inside of a
 * regular-expression character class.
 */
const textDirectionCharacters = '\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069';
const unprintableCharacters = `\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029${textDirectionCharacters}`;

/**
 * Characters that show nothing: white space, and those that print no mark (zero-width spaces and
 * joiners, the word joiner and invisible operators, the byte-order mark, soft hyphen, the combining
 * grapheme joiner, the Hangul and Mongolian fillers, the blank Braille pattern). A name of only
 * these reads as nobody. As the inside of a regular-expression character class.
 */
const invisibleCharacters = '\\s\\u00ad\\u034f\\u115f\\u1160\\u180e\\u200b-\\u200d\\u2060-\\u2064\\u2800\\u3164\\ufeff\\uffa0';

/**
 * A `pattern` for text others are shown (key and account names, webhook descriptions, a brand's
 * display name): none of the characters above. The console renders text as text and the CLI
 * escapes what it prints anyway; this keeps such text from being stored at all.
 */
export const printableTextPattern = `^[^${unprintableCharacters}]*$`;

/** The same, and not blank: at least one character that shows (an owner as an auction house names it). */
export const printableNonBlankTextPattern = `^(?=.*[^${invisibleCharacters}])[^${unprintableCharacters}]+$`;

/**
 * A `pattern` for several lines of text others are shown (an auction object's description): line
 * breaks and tabs are taken, other control characters and the text-direction characters are not.
 */
export const printableMultilineTextPattern = `^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f${textDirectionCharacters}]*$`;

/**
 * A `pattern` for an http(s) URL others are shown (a webhook endpoint's): none of the characters
 * above (a URL parser drops tabs and line breaks, so the address shown would not be the one used;
 * a direction override would reorder the console's own words around it).
 */
export const printableHttpUrlPattern = `^[Hh][Tt][Tt][Pp][Ss]?://[^${unprintableCharacters}]*$`;

const printableText = new RegExp(printableTextPattern);

/** Whether `text` matches {@link printableTextPattern}, for checks made outside a schema. */
export const isPrintableText = (text: string): boolean => printableText.test(text);
