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
