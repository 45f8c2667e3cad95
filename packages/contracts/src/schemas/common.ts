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
 * A `pattern` for text others are shown (key and account names, webhook descriptions): no control
 * characters (escape sequences, line breaks, tabs) and no bidirectional overrides, which a terminal
 * would act on or which would reorder what a listing shows. The console renders text as text and
 * the CLI escapes what it prints anyway; this keeps such text from being stored at all.
 */
export const printableTextPattern = '^[^\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069]*$';
