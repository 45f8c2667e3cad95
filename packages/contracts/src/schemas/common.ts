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
 * joiners, the word joiner, invisible operators and the other format characters of U+2060-U+206F,
 * the byte-order mark, soft hyphen, the combining grapheme joiner, variation selectors, the Khmer
 * inherent vowels, the Mongolian free variation selectors and vowel separator, the interlinear
 * annotation characters, the Hangul fillers, the blank Braille pattern: Unicode's default-ignorable
 * code points of the Basic Multilingual Plane, and U+FFF9-U+FFFB). A name of only these reads as
 * nobody. As the inside of a regular-expression character class.
 */
const invisibleCharacters =
  '\\s\\u00ad\\u034f\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f\\u200b-\\u200d\\u2060-\\u206f\\u2800\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0\\ufff0-\\ufffb';

/**
 * One character that shows, as a regular expression read without the `u` flag (as TypeBox and the
 * gateway's Ajv read every pattern: `unicodeRegExp: false` in services/gateway/src/app.ts), where a
 * character beyond U+FFFF is two UTF-16 code units: a character of the Basic Multilingual Plane not
 * above, or a pair whose first unit starts characters that show. Beyond U+FFFF, these print
 * nothing: U+E0000-U+E0FFF (tag characters, the variation selectors supplement: every first unit
 * U+DB40-U+DB43), the Egyptian hieroglyph format controls U+13430-U+1343F, the shorthand format
 * controls U+1BCA0-U+1BCA3 and the musical symbol format characters U+1D173-U+1D17A (whose first
 * units also start characters that show, so the second unit decides). A second unit alone shows
 * nothing (the JSON parser refuses one without its first anyway).
 */
const visibleCharacter = [
  `[^${invisibleCharacters}\\ud80d\\ud82f\\ud834\\udb40-\\udb43\\udc00-\\udfff]`,
  '\\ud80d[^\\udc30-\\udc3f]',
  '\\ud82f[^\\udca0-\\udca3]',
  '\\ud834[^\\udd73-\\udd7a]',
].join('|');

/**
 * A `pattern` for text others are shown (key and account names, webhook descriptions, a brand's
 * display name): none of the characters above. The console renders text as text and the CLI
 * escapes what it prints anyway; this keeps such text from being stored at all.
 */
export const printableTextPattern = `^[^${unprintableCharacters}]*$`;

/** The same, and not blank: at least one character that shows (an owner as an auction house names it). */
export const printableNonBlankTextPattern = `^(?=.*(?:${visibleCharacter}))[^${unprintableCharacters}]+$`;

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

/**
 * DELETE /blocklist?createdBy= and /links?createdBy= (after a key leaks): the key whose `things` are
 * removed, and the answer.
 */
export const RemovalByCreatorQuery = (things: string) =>
  Type.Object(
    {
      createdBy: Type.String({ minLength: 1, maxLength: 100, description: `the id of the API key whose ${things} are removed` }),
    },
    { additionalProperties: false },
  );
export type RemovalByCreatorQuery = Static<ReturnType<typeof RemovalByCreatorQuery>>;

export const RemovedByCreator = (things: string) =>
  Type.Object({
    removed: Type.Integer({ minimum: 0, description: `how many ${things} were removed (0: none was left)` }),
    more: Type.Boolean({
      description: 'true when the request stopped after its time (about 20 s) and more may be left: send it again',
    }),
  });
export type RemovedByCreator = Static<ReturnType<typeof RemovedByCreator>>;
