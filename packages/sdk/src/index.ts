export { APIPromise, PagePromise, type WithResponse } from './api-promise.ts';
export { type CallResult, Hallmark, type HallmarkOptions, type Resources, sdkVersion } from './client.ts';
export {
  APIConnectionError,
  APIError,
  APIResponseTooLargeError,
  APITimeoutError,
  APIUserAbortError,
  ConflictError,
  CsrfRejectedError,
  DuplicateSerialError,
  EmbeddedLoadRefusedError,
  type ErrorCode,
  ExpiredApiKeyError,
  errorClasses,
  errorStatus,
  GoneError,
  GtinClaimNotAllowedError,
  GtinNotOwnedError,
  HallmarkError,
  IdempotencyKeyReusedError,
  InsufficientScopeError,
  InternalError,
  InvalidApiKeyError,
  InvalidGtinError,
  InvalidResponseError,
  InvalidUrlError,
  KeyNotFoundError,
  KeyRestrictedError,
  MethodNotAllowedError,
  MissingApiKeyError,
  MissingRequiredFieldError,
  MissingSignatureError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitedError,
  RequestHeadersTooLargeError,
  RequestTimeoutError,
  RevokedApiKeyError,
  ServiceUnavailableError,
  UnsupportedMediaTypeError,
  ValidationError,
} from './errors.ts';
export type { operations, paths } from './generated/openapi.ts';
export { type OperationId, operationTable } from './generated/operations.ts';
export type { OperationInfo } from './operation-info.ts';
export { methodsOf, operationNames } from './operation-names.ts';
export type { PagedOperationId, PageItem, Params, RequestOptions, Result, Uploadable } from './types.ts';
export {
  verifyWebhook,
  type WebhookMessage,
  type WebhookPublicKey,
  WebhookVerificationError,
  type WebhookVerificationOptions,
} from './webhooks.ts';
