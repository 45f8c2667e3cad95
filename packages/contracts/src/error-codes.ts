/**
 * Every error code the API answers with, and its HTTP status.
 * The interface spec's codes come first; the rest are ours (both listed in docs/INTERFACE.md).
 */
export const errorStatus = {
  // the interface spec
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
  // ours
  VALIDATION_ERROR: 400,
  INSUFFICIENT_SCOPE: 403,
  GTIN_NOT_OWNED: 403,
  /** The key is restricted to some GTINs (POST /keys `restrictions`) and the request reaches past them. */
  KEY_RESTRICTED: 403,
  GTIN_CLAIM_NOT_ALLOWED: 403,
  /** A request made with the console's session cookie without the console's header, or from another origin. */
  CSRF_REJECTED: 403,
  /** The resolver's verification page loaded by another page (an image, a frame, a script, a fetch) or prefetched: never a scan. */
  EMBEDDED_LOAD_REFUSED: 403,
  NOT_FOUND: 404,
  /** The path exists, the method does not: the answer's Allow header lists the ones that do. */
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  GONE: 410,
  /** The Idempotency-Key was used before with another request (another body, route or path). */
  IDEMPOTENCY_KEY_REUSED: 422,
  REQUEST_TIMEOUT: 408,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  REQUEST_HEADERS_TOO_LARGE: 431,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof errorStatus;

export const errorCodes = Object.keys(errorStatus) as ErrorCode[];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(errorStatus, value);
}
