from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from .._types import ApiResult
from ._base import Resource, body_of

if TYPE_CHECKING:
    from .._client import BaseClient


class Merkle(Resource):
    """Signed Merkle roots and proofs of an asset's history."""

    def root(self, asset_id: str) -> ApiResult:
        return self._client.call("getMerkleRoot", path_params={"assetId": asset_id})

    def proof(self, asset_id: str, *, event_id: str) -> ApiResult:
        return self._client.call("getMerkleProof", path_params={"assetId": asset_id}, query={"eventId": event_id})

    def consistency(self, asset_id: str, *, from_: int, to: int | None = None) -> ApiResult:
        return self._client.call(
            "getMerkleConsistency", path_params={"assetId": asset_id}, query={"from": from_, "to": to}
        )


class Config(Resource):
    """The account's compliance settings: risk thresholds, retention, required evidence, export format."""

    def get(self) -> ApiResult:
        return self._client.call("getComplianceConfig")

    def update(
        self,
        *,
        default_export_format: Literal["json", "csv", "epcis"] | None = None,
        evidence_required_for: list[str] | None = None,
        retention: Mapping[str, Any] | None = None,
        risk_thresholds: Mapping[str, Any] | None = None,
    ) -> ApiResult:
        body = body_of(
            defaultExportFormat=default_export_format,
            evidenceRequiredFor=evidence_required_for,
            retention=dict(retention) if retention is not None else None,
            riskThresholds=dict(risk_thresholds) if risk_thresholds is not None else None,
        )
        return self._client.call("updateComplianceConfig", body=body)


class Compliance(Resource):
    """An asset's provenance chain, Merkle proofs and exports (docs/COMPLIANCE.md)."""

    def __init__(self, client: BaseClient) -> None:
        super().__init__(client)
        self.merkle = Merkle(client)
        self.config = Config(client)

    def verify_chain(self, asset_id: str) -> ApiResult:
        """Checks the asset's hash chain on the server: `isValid`, and `brokenAt` when it is not."""
        return self._client.call("verifyProvenanceChain", path_params={"assetId": asset_id})


    def export(self, asset_id: str) -> ApiResult:
        """The JSON export (hallmark.compliance-export/1), which `audit_export` checks offline."""
        return self._client.call("exportCompliance", path_params={"assetId": asset_id}, query={"format": "json"})

    def export_text(self, asset_id: str, *, format: Literal["json", "csv", "epcis"]) -> str:
        """The export as the server wrote it, in any of its formats."""
        accept = {"json": "application/json", "csv": "text/csv", "epcis": "application/ld+json"}[format]
        response = self._client.call_raw(
            "exportCompliance", path_params={"assetId": asset_id}, query={"format": format}, accept=f"{accept}, */*"
        )
        return response.text

