import type { ErrorData } from './hallmark-error.ts';

/** A value or an error, for functions whose failures are part of their contract. */
export type Result<T, E = ErrorData> = { ok: true; value: T } | { ok: false; error: E };

export const ok = <T>(value: T): Result<T, never> => ({ ok: true, value });
export const err = <E>(error: E): Result<never, E> => ({ ok: false, error });
