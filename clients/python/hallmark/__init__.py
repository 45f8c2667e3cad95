"""Hallmark's Python client: ``from hallmark import Hallmark``.

    hallmark = Hallmark(api_key="svc_live_...", base_url="https://hallmark.example")
    code = hallmark.codes.generate(gtin="09506000134352", serial_number="SN-0001")
    result = hallmark.codes.verify(url=code["url"])
"""

from ._client import __version__
from ._errors import (
    ERROR_CLASSES,
    APIConnectionError,
    APIError,
    APITimeoutError,
    ConflictError,
    CsrfRejectedError,
    DuplicateSerialError,
    ExpiredApiKeyError,
    GoneError,
    GtinClaimNotAllowedError,
    GtinNotOwnedError,
    HallmarkError,
    IdempotencyKeyReusedError,
    InsufficientScopeError,
    InternalError,
    InvalidApiKeyError,
    InvalidGtinError,
    InvalidUrlError,
    KeyNotFoundError,
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
)
from ._hallmark import Hallmark
from ._transport import RawResponse
from ._types import ApiResult, Page, Pager
from .offline import AuditReport, OfflineVerification, audit_export, verify_offline
from .webhook_signature import WebhookVerificationError, verify_webhook

__all__ = [
    "ERROR_CLASSES",
    "APIConnectionError",
    "APIError",
    "APITimeoutError",
    "ApiResult",
    "AuditReport",
    "ConflictError",
    "CsrfRejectedError",
    "DuplicateSerialError",
    "ExpiredApiKeyError",
    "GoneError",
    "GtinClaimNotAllowedError",
    "GtinNotOwnedError",
    "Hallmark",
    "HallmarkError",
    "IdempotencyKeyReusedError",
    "InsufficientScopeError",
    "InternalError",
    "InvalidApiKeyError",
    "InvalidGtinError",
    "InvalidUrlError",
    "KeyNotFoundError",
    "MethodNotAllowedError",
    "MissingApiKeyError",
    "MissingRequiredFieldError",
    "MissingSignatureError",
    "NotFoundError",
    "OfflineVerification",
    "Page",
    "Pager",
    "PayloadTooLargeError",
    "RateLimitedError",
    "RawResponse",
    "RequestHeadersTooLargeError",
    "RequestTimeoutError",
    "RevokedApiKeyError",
    "ServiceUnavailableError",
    "UnsupportedMediaTypeError",
    "ValidationError",
    "WebhookVerificationError",
    "__version__",
    "audit_export",
    "verify_offline",
    "verify_webhook",
]
