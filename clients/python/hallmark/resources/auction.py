from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from .._types import ApiResult, Pager
from ._base import Resource, body_of

if TYPE_CHECKING:
    from .._client import BaseClient


def multipart(form: Mapping[str, str], file_field: str, filename: str, content_type: str, data: bytes) -> tuple[bytes, str]:
    """A multipart/form-data body (RFC 7578) and its Content-Type."""
    boundary = f"hallmark-{uuid.uuid4().hex}"
    parts: list[bytes] = []
    for name, value in form.items():
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        )
    safe_name = filename.replace('"', "").replace("\r", "").replace("\n", "")
    parts.append(
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="{file_field}"; filename="{safe_name}"\r\n'
            f"Content-Type: {content_type}\r\n\r\n"
        ).encode()
        + data
        + b"\r\n"
    )
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


class Objects(Resource):
    """Auction objects: registration, photos, provenance, the dashboard and the public check."""

    def register(
        self,
        *,
        title: str,
        category: Literal["watch", "painting", "bottle"],
        description: str | None = None,
        estimated_value: Mapping[str, Any] | None = None,
        owner_id: str | None = None,
        idempotency_key: str | None = None,
    ) -> ApiResult:
        """Registers an object (201): its id, service serial and signed link."""
        body = body_of(
            title=title,
            category=category,
            description=description,
            estimated_value=dict(estimated_value) if estimated_value is not None else None,
            ownerId=owner_id,
        )
        return self._client.call("registerAuctionObject", body=body, idempotency_key=idempotency_key)

    def upload_photo(
        self,
        object_id: str,
        *,
        photo: bytes,
        angle: str,
        filename: str = "photo.jpg",
        content_type: str = "image/jpeg",
        idempotency_key: str | None = None,
    ) -> ApiResult:
        """Binds a photo (JPEG, PNG or WebP bytes) at an angle of the object."""
        content, multipart_type = multipart({"angle": angle}, "photo", filename, content_type, photo)
        return self._client.call(
            "uploadAuctionPhoto",
            path_params={"objectId": object_id},
            content=content,
            content_type=multipart_type,
            idempotency_key=idempotency_key,
        )

    def provenance(self, serial: str) -> ApiResult:
        """The object's provenance (by id or service serial)."""
        return self._client.call("getAuctionProvenance", path_params={"serial": serial})

    def list(self, *, status: Literal["consigned", "listed", "sold"] | None = None, limit: int | None = None) -> Pager:
        """The account's objects (the dashboard)."""
        return self._client.paged("listAuctionObjects", query={"status": status, "limit": limit})

    def public_verify(self, serial: str) -> ApiResult:
        """What anyone sees of an object by its service serial (no key needed)."""
        return self._client.call("publicVerifyAuctionObject", path_params={"serial": serial})


class Provenance(Resource):
    def record(
        self,
        *,
        object_id: str,
        event_type: str,
        actor_role: str | None = None,
        actor_name: str | None = None,
        description: str | None = None,
        evidence: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> ApiResult:
        """Appends an event to the object's provenance chain (201)."""
        body = body_of(
            objectId=object_id,
            eventType=event_type,
            actorRole=actor_role,
            actorName=actor_name,
            description=description,
            evidence=dict(evidence) if evidence is not None else None,
        )
        return self._client.call("recordProvenanceEvent", body=body, idempotency_key=idempotency_key)


class Transfers(Resource):
    def initiate(
        self,
        *,
        object_id: str,
        from_owner_id: str,
        to_owner_id: str,
        sale_price: float,
        sale_currency: str,
        idempotency_key: str | None = None,
    ) -> ApiResult:
        """Starts a transfer (201); the answer's transfer code goes to the buyer."""
        body = body_of(
            objectId=object_id,
            fromOwnerId=from_owner_id,
            toOwnerId=to_owner_id,
            salePrice=sale_price,
            saleCurrency=sale_currency,
        )
        return self._client.call("initiateTransfer", body=body, idempotency_key=idempotency_key)

    def confirm(self, transfer_id: str, *, transfer_code: str) -> ApiResult:
        return self._client.call(
            "confirmTransfer", path_params={"transferId": transfer_id}, body={"transferCode": transfer_code}
        )

    def cancel(self, transfer_id: str) -> ApiResult:
        """Cancels a pending transfer (the seller's): its code completes nothing from then on."""
        return self._client.call("cancelTransfer", path_params={"transferId": transfer_id})


class Auction(Resource):
    def __init__(self, client: BaseClient) -> None:
        super().__init__(client)
        self.objects = Objects(client)
        self.provenance = Provenance(client)
        self.transfers = Transfers(client)
