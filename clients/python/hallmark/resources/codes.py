from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from .._types import ApiResult, Pager
from ._base import Resource, body_of

if TYPE_CHECKING:
    from .._client import BaseClient


class Reports(Resource):
    """Reports of the caller's codes, to confirm (block the code) or dismiss, and a confirmed one's block to lift."""

    def list(
        self,
        *,
        status: Literal["pending", "confirmed", "dismissed", "lifted"] | None = None,
        limit: int | None = None,
    ) -> Pager:
        return self._client.paged("listCodeReports", query={"status": status, "limit": limit})

    def confirm(self, report_id: str, *, reason: str | None = None) -> ApiResult:
        return self._client.call("confirmCodeReport", path_params={"reportId": report_id}, body=body_of(reason=reason))

    def dismiss(self, report_id: str, *, reason: str | None = None) -> ApiResult:
        return self._client.call("dismissCodeReport", path_params={"reportId": report_id}, body=body_of(reason=reason))

    def lift(self, report_id: str, *, reason: str | None = None) -> ApiResult:
        return self._client.call("liftCodeReport", path_params={"reportId": report_id}, body=body_of(reason=reason))


class Codes(Resource):
    """Generating, verifying and reporting codes (docs/API.md, Codes)."""

    def __init__(self, client: BaseClient) -> None:
        super().__init__(client)
        self.reports = Reports(client)

    def list(
        self,
        *,
        gtin: str | None = None,
        serial: str | None = None,
        batch: str | None = None,
        limit: int | None = None,
    ) -> Pager:
        """The account's codes, newest first; exact gtin, serial and batch filters."""
        return self._client.paged("listCodes", query={"gtin": gtin, "serial": serial, "batch": batch, "limit": limit})

    def get(self, asset_id: str) -> ApiResult:
        """One code by its asset id, with its scan count, flags, reports and any active block."""
        return self._client.call("getCode", path_params={"assetId": asset_id})

    def generate(
        self,
        *,
        gtin: str,
        serial_number: str,
        batch_number: str | None = None,
        expiry_date: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        schema_id: str | None = None,
        schema_version: int | None = None,
        idempotency_key: str | None = None,
    ) -> ApiResult:
        """A signed code (201). An Idempotency-Key is sent (a fresh one unless given), the same on every retry."""
        body = body_of(
            gtin=gtin,
            serialNumber=serial_number,
            batchNumber=batch_number,
            expiryDate=expiry_date,
            metadata=dict(metadata) if metadata is not None else None,
            schemaId=schema_id,
            schemaVersion=schema_version,
        )
        return self._client.call("generateCode", body=body, idempotency_key=idempotency_key)

    def generate_batch(self, items: Iterable[Mapping[str, Any]], *, idempotency_key: str | None = None) -> ApiResult:
        """Up to 10,000 codes; `items` use the wire's names (gtin, serialNumber, ...). Answers `results` per item."""
        return self._client.call(
            "generateCodeBatch", body={"items": [dict(item) for item in items]}, idempotency_key=idempotency_key
        )

    def verify(
        self,
        *,
        url: str | None = None,
        content: str | None = None,
        location: Mapping[str, Any] | None = None,
        view: Literal["quickstart"] | None = None,
    ) -> ApiResult:
        """Verifies a link (`url`) or a QR code's text (`content`): verdict, confidence, risk and checks."""
        body = body_of(url=url, content=content, location=dict(location) if location is not None else None)
        return self._client.call("verifyCode", body=body, query={"view": view})

    def report(
        self,
        *,
        url: str | None = None,
        content: str | None = None,
        reason: str | None = None,
        idempotency_key: str | None = None,
    ) -> ApiResult:
        """Files a report of a code with its owner (201)."""
        body = body_of(url=url, content=content, reason=reason)
        return self._client.call("reportCode", body=body, idempotency_key=idempotency_key)

    def qr(
        self,
        url: str,
        *,
        format: Literal["svg", "png"] = "svg",
        size: int | None = None,
        mm: float | None = None,
        dpi: int | None = None,
    ) -> bytes:
        """The QR image of a code's link (SVG or PNG bytes)."""
        accept = "image/svg+xml" if format == "svg" else "image/png"
        response = self._client.call_raw(
            "getCodeQr", query={"url": url, "format": format, "size": size, "mm": mm, "dpi": dpi}, accept=accept
        )
        return response.content
