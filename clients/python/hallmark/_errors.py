"""Exceptions: one class per error code the API answers with (packages/contracts/src/error-codes.ts)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Any


class HallmarkError(Exception):
    """Any failure of a call: an answer from the API, or no answer at all."""


class APIConnectionError(HallmarkError):
    """No answer came: the connection failed, was cut, or the request timed out (after every retry)."""

    def __init__(self, message: str, *, cause: BaseException | None = None) -> None:
        super().__init__(message)
        self.cause = cause


class APITimeoutError(APIConnectionError):
    """The answer did not come within the timeout (after every retry)."""


class APIResponseTooLargeError(HallmarkError):
    """The answer was larger than the client's `max_response_bytes` (256 MiB unless set): it was not
    read further, and the call is not retried. A scans or compliance export as CSV can be larger: make
    that call with ``hallmark.with_options(max_response_bytes=None)`` (no bound) or a larger one.
    """


class APIError(HallmarkError):
    """The API answered with its error envelope: `{ error: { code, message, details }, meta: { requestId } }`."""

    #: The API's error code this class stands for (None on the base class).
    error_code: str | None = None

    def __init__(
        self,
        message: str,
        *,
        code: str,
        status: int,
        request_id: str | None,
        details: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        body: Any = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        self.request_id = request_id
        self.details: dict[str, Any] = dict(details or {})
        self.headers: dict[str, str] = dict(headers or {})
        self.body = body

    def __str__(self) -> str:
        suffix = f" (request {self.request_id})" if self.request_id else ""
        return f"{self.status} {self.code}: {self.message}{suffix}"


class InvalidGtinError(APIError):
    error_code = "INVALID_GTIN"


class DuplicateSerialError(APIError):
    error_code = "DUPLICATE_SERIAL"


class MissingRequiredFieldError(APIError):
    error_code = "MISSING_REQUIRED_FIELD"


class InvalidUrlError(APIError):
    error_code = "INVALID_URL"


class MissingSignatureError(APIError):
    error_code = "MISSING_SIGNATURE"


class KeyNotFoundError(APIError):
    error_code = "KEY_NOT_FOUND"


class RateLimitedError(APIError):
    error_code = "RATE_LIMITED"

    @property
    def retry_after(self) -> float | None:
        """Seconds the API asked to wait (Retry-After), when it said."""
        return parse_retry_after(self.headers.get("retry-after"))


class MissingApiKeyError(APIError):
    error_code = "MISSING_API_KEY"


class InvalidApiKeyError(APIError):
    error_code = "INVALID_API_KEY"


class ExpiredApiKeyError(APIError):
    error_code = "EXPIRED_API_KEY"


class RevokedApiKeyError(APIError):
    error_code = "REVOKED_API_KEY"


class ValidationError(APIError):
    error_code = "VALIDATION_ERROR"

    @property
    def fields(self) -> list[dict[str, Any]]:
        """One entry per bad field: `{ field, in, message }` (docs/API.md, Validation errors)."""
        fields = self.details.get("fields")
        # An entry that is not an object (a malformed answer) is left out, as Page.data leaves out nothing it cannot read.
        return [dict(field) for field in fields if isinstance(field, dict)] if isinstance(fields, list) else []


class InsufficientScopeError(APIError):
    error_code = "INSUFFICIENT_SCOPE"


class GtinNotOwnedError(APIError):
    error_code = "GTIN_NOT_OWNED"


class KeyRestrictedError(APIError):
    """The key is restricted to some GTINs and the request reaches past them (details: restrictedTo, unlisted)."""

    error_code = "KEY_RESTRICTED"


class GtinClaimNotAllowedError(APIError):
    error_code = "GTIN_CLAIM_NOT_ALLOWED"


class CsrfRejectedError(APIError):
    """A request with the console's session cookie but without the console's header, or from another origin."""

    error_code = "CSRF_REJECTED"


class EmbeddedLoadRefusedError(APIError):
    """The resolver's verification page loaded by another page or prefetched (a browser's Sec-Fetch-Dest): never a scan."""

    error_code = "EMBEDDED_LOAD_REFUSED"


class NotFoundError(APIError):
    error_code = "NOT_FOUND"


class MethodNotAllowedError(APIError):
    error_code = "METHOD_NOT_ALLOWED"


class ConflictError(APIError):
    error_code = "CONFLICT"


class GoneError(APIError):
    error_code = "GONE"


class IdempotencyKeyReusedError(APIError):
    error_code = "IDEMPOTENCY_KEY_REUSED"


class RequestTimeoutError(APIError):
    error_code = "REQUEST_TIMEOUT"


class PayloadTooLargeError(APIError):
    error_code = "PAYLOAD_TOO_LARGE"


class UnsupportedMediaTypeError(APIError):
    error_code = "UNSUPPORTED_MEDIA_TYPE"


class RequestHeadersTooLargeError(APIError):
    error_code = "REQUEST_HEADERS_TOO_LARGE"


class InternalError(APIError):
    error_code = "INTERNAL_ERROR"


class ServiceUnavailableError(APIError):
    error_code = "SERVICE_UNAVAILABLE"


class InvalidResponseError(APIError):
    """A success that is not what the operation answers: code ``INVALID_RESPONSE`` (the client's, not the API's).

    A proxy's or a captive portal's HTML page with 200 where JSON was due, a redirect from an
    operation that does not redirect, a list whose next cursor leads back to the page just read. Not
    retried: the same server would answer the same.
    """

    def __init__(self, message: str, *, status: int, headers: Mapping[str, str], body: Any = None) -> None:
        super().__init__(
            message, code="INVALID_RESPONSE", status=status, request_id=headers.get("x-request-id"), headers=headers, body=body
        )


#: The class of each error code, and the HTTP status the API answers it with.
ERROR_CLASSES: dict[str, type[APIError]] = {
    cls.error_code: cls
    for cls in (
        InvalidGtinError,
        DuplicateSerialError,
        MissingRequiredFieldError,
        InvalidUrlError,
        MissingSignatureError,
        KeyNotFoundError,
        RateLimitedError,
        MissingApiKeyError,
        InvalidApiKeyError,
        ExpiredApiKeyError,
        RevokedApiKeyError,
        ValidationError,
        InsufficientScopeError,
        GtinNotOwnedError,
        KeyRestrictedError,
        GtinClaimNotAllowedError,
        CsrfRejectedError,
        EmbeddedLoadRefusedError,
        NotFoundError,
        MethodNotAllowedError,
        ConflictError,
        GoneError,
        IdempotencyKeyReusedError,
        RequestTimeoutError,
        PayloadTooLargeError,
        UnsupportedMediaTypeError,
        RequestHeadersTooLargeError,
        InternalError,
        ServiceUnavailableError,
    )
    if cls.error_code is not None
}

ERROR_STATUS: dict[str, int] = {
    "INVALID_GTIN": 400,
    "DUPLICATE_SERIAL": 409,
    "MISSING_REQUIRED_FIELD": 400,
    "INVALID_URL": 400,
    "MISSING_SIGNATURE": 400,
    "KEY_NOT_FOUND": 404,
    "RATE_LIMITED": 429,
    "MISSING_API_KEY": 401,
    "INVALID_API_KEY": 401,
    "EXPIRED_API_KEY": 401,
    "REVOKED_API_KEY": 401,
    "VALIDATION_ERROR": 400,
    "INSUFFICIENT_SCOPE": 403,
    "GTIN_NOT_OWNED": 403,
    "KEY_RESTRICTED": 403,
    "GTIN_CLAIM_NOT_ALLOWED": 403,
    "CSRF_REJECTED": 403,
    "EMBEDDED_LOAD_REFUSED": 403,
    "NOT_FOUND": 404,
    "METHOD_NOT_ALLOWED": 405,
    "CONFLICT": 409,
    "GONE": 410,
    "IDEMPOTENCY_KEY_REUSED": 422,
    "REQUEST_TIMEOUT": 408,
    "PAYLOAD_TOO_LARGE": 413,
    "UNSUPPORTED_MEDIA_TYPE": 415,
    "REQUEST_HEADERS_TOO_LARGE": 431,
    "INTERNAL_ERROR": 500,
    "SERVICE_UNAVAILABLE": 503,
}


def _classes_by_status() -> dict[int, type[APIError]]:
    codes_by_status: dict[int, list[str]] = {}
    for code, status in ERROR_STATUS.items():
        codes_by_status.setdefault(status, []).append(code)
    return {status: ERROR_CLASSES[codes[0]] for status, codes in codes_by_status.items() if len(codes) == 1}


#: For an answer outside the envelope: the class of the only code with its status.
_CLASS_BY_STATUS = _classes_by_status()


def _seconds(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def parse_retry_after(value: str | None) -> float | None:
    """Retry-After in seconds (RFC 9110: delay-seconds or an HTTP date), or None when absent or unreadable.

    A negative number is no wait; of two values a proxy joined into one (``5, 5``) the first counts,
    as the TypeScript SDK reads it. A date's commas are its own, so a date is read whole.
    """
    if value is None:
        return None
    text = value.strip()
    seconds = _seconds(text)
    if seconds is None:
        seconds = _seconds(text.split(",", 1)[0])
    if seconds is None:
        try:
            seconds = parsedate_to_datetime(text).timestamp() - time.time()
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
    return max(seconds, 0.0) if seconds == seconds else None


def error_from_response(status: int, headers: Mapping[str, str], body: Any) -> APIError:
    """The exception for an error answer: the class of its code (APIError for a code this client does not know).

    An answer outside the envelope gets code `HTTP_<status>` and the class of the one code the API
    answers with that status, else APIError (as the TypeScript SDK does).
    """
    envelope = body.get("error") if isinstance(body, dict) else None
    meta = body.get("meta") if isinstance(body, dict) else None
    request_id = headers.get("x-request-id")
    if isinstance(meta, dict) and isinstance(meta.get("requestId"), str):
        request_id = meta["requestId"]
    if isinstance(envelope, dict) and isinstance(envelope.get("code"), str):
        code: str = envelope["code"]
        message = str(envelope.get("message", code))
        details = envelope.get("details") if isinstance(envelope.get("details"), dict) else None
        cls = ERROR_CLASSES.get(code, APIError)
    else:
        # Not the API's own answer (a proxy's or a load balancer's page).
        code = f"HTTP_{status}"
        message = f"HTTP {status} without Hallmark's error envelope"
        details = None
        cls = _CLASS_BY_STATUS.get(status, APIError)
    return cls(message, code=code, status=status, request_id=request_id, details=details, headers=headers, body=body)
