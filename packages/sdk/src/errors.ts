/**
 * What a call throws. An answer in the API's error envelope becomes the class of its `code` (one per
 * code of packages/contracts/src/error-codes.ts; errors.unit.test.ts keeps the two lists equal), all
 * subclasses of `APIError`; a code this SDK does not know yet becomes a plain `APIError`. A request
 * that got no answer is an `APIConnectionError`, one that ran out of time an `APITimeoutError`, one
 * the caller aborted an `APIUserAbortError`. A success that is not what the operation answers (a
 * proxy's HTML page where JSON was due, a list whose next cursor leads back to the same page) is an
 * `InvalidResponseError`.
 */
import { retryAfterMs } from './retry.ts';

/** Every error code the API answers with, and its HTTP status (the API's own list). */
export const errorStatus = {
  INVALID_GTIN: 400,
  DUPLICATE_SERIAL: 409,
  MISSING_REQUIRED_FIELD: 400,
  INVALID_URL: 400,
  MISSING_SIGNATURE: 400,
  KEY_NOT_FOUND: 404,
  RATE_LIMITED: 429,
  MISSING_API_KEY: 401,
  INVALID_API_KEY: 401,
  EXPIRED_API_KEY: 401,
  REVOKED_API_KEY: 401,
  VALIDATION_ERROR: 400,
  INSUFFICIENT_SCOPE: 403,
  CSRF_REJECTED: 403,
  EMBEDDED_LOAD_REFUSED: 403,
  GTIN_NOT_OWNED: 403,
  KEY_RESTRICTED: 403,
  GTIN_CLAIM_NOT_ALLOWED: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  GONE: 410,
  IDEMPOTENCY_KEY_REUSED: 422,
  REQUEST_TIMEOUT: 408,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  REQUEST_HEADERS_TOO_LARGE: 431,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

/** The base of every error this SDK throws. */
export class HallmarkError extends Error {
  override name = 'HallmarkError';
}

/** An answer from the API that is not a success. */
export class APIError extends HallmarkError {
  override name = 'APIError';
  /** The API's error code (`RATE_LIMITED`); for an answer outside the envelope, `HTTP_<status>`. */
  readonly code: string;
  readonly status: number;
  /** The answer's X-Request-Id (or the envelope's `meta.requestId`): quote it when asking for help. */
  readonly requestId: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  readonly headers: Headers;

  constructor(init: {
    code: string;
    status: number;
    message: string;
    requestId: string | undefined;
    details: Record<string, unknown> | undefined;
    headers: Headers;
  }) {
    super(init.message);
    this.code = init.code;
    this.status = init.status;
    this.requestId = init.requestId;
    this.details = init.details;
    this.headers = init.headers;
  }
}

export class InvalidGtinError extends APIError {
  override name = 'InvalidGtinError';
}
export class DuplicateSerialError extends APIError {
  override name = 'DuplicateSerialError';
}
export class MissingRequiredFieldError extends APIError {
  override name = 'MissingRequiredFieldError';
}
export class InvalidUrlError extends APIError {
  override name = 'InvalidUrlError';
}
export class MissingSignatureError extends APIError {
  override name = 'MissingSignatureError';
}
export class KeyNotFoundError extends APIError {
  override name = 'KeyNotFoundError';
}
export class RateLimitedError extends APIError {
  override name = 'RateLimitedError';
  /** Seconds the API asked to wait (Retry-After), if it said: read as the retries read it. */
  get retryAfterSeconds(): number | undefined {
    const milliseconds = retryAfterMs(this.headers);
    return milliseconds === undefined ? undefined : milliseconds / 1000;
  }
}
export class MissingApiKeyError extends APIError {
  override name = 'MissingApiKeyError';
}
export class InvalidApiKeyError extends APIError {
  override name = 'InvalidApiKeyError';
}
export class ExpiredApiKeyError extends APIError {
  override name = 'ExpiredApiKeyError';
}
export class RevokedApiKeyError extends APIError {
  override name = 'RevokedApiKeyError';
}
export class ValidationError extends APIError {
  override name = 'ValidationError';
}
export class InsufficientScopeError extends APIError {
  override name = 'InsufficientScopeError';
}
/** A console session's unsafe request without its CSRF token (browser sessions only). */
export class CsrfRejectedError extends APIError {
  override name = 'CsrfRejectedError';
}
/** The resolver's verification page loaded by another page or prefetched (a browser's Sec-Fetch-Dest): never a scan. */
export class EmbeddedLoadRefusedError extends APIError {
  override name = 'EmbeddedLoadRefusedError';
}
export class GtinNotOwnedError extends APIError {
  override name = 'GtinNotOwnedError';
}
/** The key is restricted to some GTINs, and the request reaches past them: details `restrictedTo`, and `unlisted` GTINs named. */
export class KeyRestrictedError extends APIError {
  override name = 'KeyRestrictedError';
}
export class GtinClaimNotAllowedError extends APIError {
  override name = 'GtinClaimNotAllowedError';
}
export class NotFoundError extends APIError {
  override name = 'NotFoundError';
}
export class MethodNotAllowedError extends APIError {
  override name = 'MethodNotAllowedError';
}
export class ConflictError extends APIError {
  override name = 'ConflictError';
}
export class GoneError extends APIError {
  override name = 'GoneError';
}
export class IdempotencyKeyReusedError extends APIError {
  override name = 'IdempotencyKeyReusedError';
}
export class RequestTimeoutError extends APIError {
  override name = 'RequestTimeoutError';
}
export class PayloadTooLargeError extends APIError {
  override name = 'PayloadTooLargeError';
}
export class UnsupportedMediaTypeError extends APIError {
  override name = 'UnsupportedMediaTypeError';
}
export class RequestHeadersTooLargeError extends APIError {
  override name = 'RequestHeadersTooLargeError';
}
export class InternalError extends APIError {
  override name = 'InternalError';
}
export class ServiceUnavailableError extends APIError {
  override name = 'ServiceUnavailableError';
}

/**
 * A success that is not what the operation answers: code `INVALID_RESPONSE` (the client's, not the
 * API's), with the answer's status and headers. Not retried: the same server would answer the same.
 */
export class InvalidResponseError extends APIError {
  override name = 'InvalidResponseError';

  constructor(init: { message: string; status: number; headers: Headers; requestId: string | undefined }) {
    super({ code: 'INVALID_RESPONSE', details: undefined, ...init, message: `${init.status} INVALID_RESPONSE: ${init.message}` });
  }
}

/** The class each error code is thrown as. */
export const errorClasses: Readonly<Record<ErrorCode, typeof APIError>> = {
  INVALID_GTIN: InvalidGtinError,
  DUPLICATE_SERIAL: DuplicateSerialError,
  MISSING_REQUIRED_FIELD: MissingRequiredFieldError,
  INVALID_URL: InvalidUrlError,
  MISSING_SIGNATURE: MissingSignatureError,
  KEY_NOT_FOUND: KeyNotFoundError,
  RATE_LIMITED: RateLimitedError,
  MISSING_API_KEY: MissingApiKeyError,
  INVALID_API_KEY: InvalidApiKeyError,
  EXPIRED_API_KEY: ExpiredApiKeyError,
  REVOKED_API_KEY: RevokedApiKeyError,
  VALIDATION_ERROR: ValidationError,
  INSUFFICIENT_SCOPE: InsufficientScopeError,
  CSRF_REJECTED: CsrfRejectedError,
  EMBEDDED_LOAD_REFUSED: EmbeddedLoadRefusedError,
  GTIN_NOT_OWNED: GtinNotOwnedError,
  KEY_RESTRICTED: KeyRestrictedError,
  GTIN_CLAIM_NOT_ALLOWED: GtinClaimNotAllowedError,
  NOT_FOUND: NotFoundError,
  METHOD_NOT_ALLOWED: MethodNotAllowedError,
  CONFLICT: ConflictError,
  GONE: GoneError,
  IDEMPOTENCY_KEY_REUSED: IdempotencyKeyReusedError,
  REQUEST_TIMEOUT: RequestTimeoutError,
  PAYLOAD_TOO_LARGE: PayloadTooLargeError,
  UNSUPPORTED_MEDIA_TYPE: UnsupportedMediaTypeError,
  REQUEST_HEADERS_TOO_LARGE: RequestHeadersTooLargeError,
  INTERNAL_ERROR: InternalError,
  SERVICE_UNAVAILABLE: ServiceUnavailableError,
};

/** No answer came: the connection was refused, reset or closed before a response. */
export class APIConnectionError extends HallmarkError {
  override name = 'APIConnectionError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The attempt ran out of time (the client's `timeout`) before the answer was read. */
export class APITimeoutError extends APIConnectionError {
  override name = 'APITimeoutError';
}

/**
 * The answer was larger than the call's `maxResponseBytes` (256 MiB unless set): it was not read
 * further, and the call is not retried. A scans or compliance export as CSV can be larger; give that
 * call a larger `maxResponseBytes`.
 */
export class APIResponseTooLargeError extends HallmarkError {
  override name = 'APIResponseTooLargeError';
}

/** The caller's AbortSignal fired; the call was not retried. */
export class APIUserAbortError extends HallmarkError {
  override name = 'APIUserAbortError';
}

/**
 * For an answer outside the envelope (a proxy's or load balancer's 429, 503 or 431): the class of the
 * one code the API answers with that status, where there is only one.
 */
const classByStatus = (() => {
  const codesByStatus = new Map<number, ErrorCode[]>();
  for (const code of Object.keys(errorStatus) as ErrorCode[]) {
    codesByStatus.set(errorStatus[code], [...(codesByStatus.get(errorStatus[code]) ?? []), code]);
  }
  const classes = new Map<number, typeof APIError>();
  for (const [status, codes] of codesByStatus) if (codes.length === 1) classes.set(status, errorClasses[codes[0] as ErrorCode]);
  return classes;
})();

function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(errorStatus, value);
}

/**
 * The error an unsuccessful answer stands for, from its body text. The envelope is
 * `{ error: { code, message, details? }, meta: { requestId } }`; anything else (a proxy's HTML page)
 * gets code `HTTP_<status>` and the class of the one code the API answers with that status (a
 * proxy's 429 is a `RateLimitedError`), else `APIError`. A code this SDK does not know is an `APIError`.
 */
export function errorFromResponse(status: number, headers: Headers, bodyText: string): APIError {
  let envelope: { error?: { code?: unknown; message?: unknown; details?: unknown }; meta?: { requestId?: unknown } } = {};
  try {
    envelope = JSON.parse(bodyText) as typeof envelope;
  } catch {
    // Not JSON: described by its status below.
  }
  const error = typeof envelope === 'object' && envelope !== null ? envelope.error : undefined;
  const code = typeof error?.code === 'string' ? error.code : `HTTP_${status}`;
  const message =
    typeof error?.message === 'string' ? error.message : `HTTP ${status}${bodyText ? `: ${bodyText.slice(0, 200)}` : ''}`;
  const details =
    typeof error?.details === 'object' && error.details !== null ? (error.details as Record<string, unknown>) : undefined;
  const requestId =
    headers.get('x-request-id') ?? (typeof envelope?.meta?.requestId === 'string' ? envelope.meta.requestId : undefined);
  const inEnvelope = typeof error?.code === 'string';
  const ErrorClass = isErrorCode(code) ? errorClasses[code] : inEnvelope ? APIError : (classByStatus.get(status) ?? APIError);
  return new ErrorClass({ code, status, message: `${status} ${code}: ${message}`, requestId, details, headers });
}
