from __future__ import annotations

from typing import Literal

from .._types import ApiResult, Pager
from ._base import Resource, body_of

Verdict = Literal["AUTHENTIC", "COUNTERFEIT", "SUSPICIOUS"]
ScannedBy = Literal["owner", "public", "other"]


class Scans(Resource):
    """The scans of the caller's codes: lists, CSV and counts (docs/API.md, Scans)."""

    def list(
        self,
        *,
        from_: str | None = None,
        to: str | None = None,
        verdict: Verdict | None = None,
        flag: str | None = None,
        gtin: str | None = None,
        serial: str | None = None,
        batch: str | None = None,
        country: str | None = None,
        reported: bool | None = None,
        scanned_by: ScannedBy | None = None,
        limit: int | None = None,
    ) -> Pager:
        """Newest first; iterate it for every matching scan, page after page."""
        query = {
            "from": from_,
            "to": to,
            "verdict": verdict,
            "flag": flag,
            "gtin": gtin,
            "serial": serial,
            "batch": batch,
            "country": country,
            "reported": reported,
            "scannedBy": scanned_by,
            "limit": limit,
        }
        return self._client.paged("listScans", query=query)

    def csv(
        self,
        *,
        from_: str | None = None,
        to: str | None = None,
        verdict: Verdict | None = None,
        gtin: str | None = None,
        serial: str | None = None,
    ) -> str:
        """Every matching scan as CSV (one request; the server streams it)."""
        query = {"from": from_, "to": to, "verdict": verdict, "gtin": gtin, "serial": serial, "format": "csv"}
        return self._client.call_raw("listScans", query=query, accept="text/csv").text

    def aggregates(
        self,
        *,
        group_by: Literal["verdict", "flag", "country"],
        bucket: Literal["hour", "day"] | None = None,
        from_: str | None = None,
        to: str | None = None,
    ) -> ApiResult:
        return self._client.call(
            "getScanAggregates", query={"groupBy": group_by, "bucket": bucket, "from": from_, "to": to}
        )

    def top_codes(
        self,
        *,
        from_: str | None = None,
        to: str | None = None,
        limit: int | None = None,
        verdict: Literal["SUSPICIOUS", "COUNTERFEIT"] | None = None,
    ) -> ApiResult:
        """``verdict="SUSPICIOUS"`` ranks by suspicious scans alone: a cloned code stays on the list
        however many forged serials are scanned (docs/API.md, Scans)."""
        return self._client.call(
            "getTopScannedCodes", query={"from": from_, "to": to, "limit": limit, "verdict": verdict}
        )

    def countries(self, *, from_: str | None = None, to: str | None = None) -> ApiResult:
        return self._client.call("getScanCountries", query={"from": from_, "to": to})


class Blocklist(Resource):
    """Codes the brand marks counterfeit or withdrawn (docs/API.md, Blocklist)."""

    def create(
        self,
        *,
        gtin: str,
        kind: Literal["counterfeit", "withdrawn"],
        serial: str | None = None,
        serial_from: str | None = None,
        serial_to: str | None = None,
        reason: str | None = None,
        idempotency_key: str | None = None,
    ) -> ApiResult:
        """Blocks one code (`serial`) or a range (`serial_from`..`serial_to`)."""
        body = body_of(gtin=gtin, kind=kind, serial=serial, serialFrom=serial_from, serialTo=serial_to, reason=reason)
        return self._client.call("createBlock", body=body, idempotency_key=idempotency_key)

    def create_from_csv(self, csv: str | bytes) -> ApiResult:
        """Blocks from CSV text (header naming gtin, serial, serialFrom, serialTo, kind, reason); `results` per line."""
        content = csv.encode("utf-8") if isinstance(csv, str) else csv
        return self._client.call("createBlocksFromCsv", content=content, content_type="text/csv")

    def list(
        self,
        *,
        gtin: str | None = None,
        status: Literal["active", "removed"] | None = None,
        created_by: str | None = None,
        limit: int | None = None,
    ) -> Pager:
        """The account's blocks, newest first; `created_by` (an API key's id): that key's alone, after a leak."""
        query = {"gtin": gtin, "status": status, "createdBy": created_by, "limit": limit}
        return self._client.paged("listBlocks", query=query)

    def delete(self, block_id: str) -> ApiResult:
        """Unblocks; answers the block with `status: "removed"`."""
        return self._client.call("deleteBlock", path_params={"blockId": block_id})

    def remove_made_by(self, created_by: str) -> ApiResult:
        """Removes every active block the API key `created_by` made (after it leaked); answers `removed` and `more` (call again while `more`). Needs `*`."""
        return self._client.call("removeBlocksMadeBy", query={"createdBy": created_by})


