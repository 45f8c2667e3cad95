import { type ErrorCode, errorStatus, isErrorCode } from './error-codes.ts';

/** The serialisable form of an error: what crosses the bus and what the HTTP envelope carries. */
export interface ErrorData {
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

/**
 * The one error type of Hallmark. Its `code` is stable and maps to an HTTP status;
 * its message is written for the API's user; `cause` keeps the underlying error for logs only.
 */
export class HallmarkError extends Error {
  override readonly name = 'HallmarkError';
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.details = details;
  }

  get status(): number {
    return errorStatus[this.code];
  }

  toData(): ErrorData {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: this.details };
  }

  static fromData(data: ErrorData): HallmarkError {
    return new HallmarkError(data.code, data.message, data.details);
  }
}

/**
 * Turns anything thrown into a HallmarkError. Unknown errors become INTERNAL_ERROR with a
 * generic message: their text may hold internals and is kept only as `cause`.
 */
export function toHallmarkError(error: unknown): HallmarkError {
  if (error instanceof HallmarkError) return error;
  if (isErrorData(error)) return HallmarkError.fromData(error);
  return new HallmarkError('INTERNAL_ERROR', 'An internal error occurred.', undefined, { cause: error });
}

export function isErrorData(value: unknown): value is ErrorData {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return isErrorCode(candidate.code) && typeof candidate.message === 'string';
}
