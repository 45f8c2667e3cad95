from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from .._types import ApiResult, Pager
from ._base import Resource, body_of

if TYPE_CHECKING:
    from .._client import BaseClient


class Schemas(Resource):
    """Metadata schemas that generation validates against (docs/API.md, Metadata schemas)."""

    def create(
        self,
        *,
        name: str | None = None,
        vertical: str | None = None,
        fields: Iterable[Mapping[str, Any]] | None = None,
        additional_properties: bool | None = None,
        copy_from: str | None = None,
        idempotency_key: str | None = None,
    ) -> ApiResult:
        body = body_of(
            name=name,
            vertical=vertical,
            fields=[dict(field) for field in fields] if fields is not None else None,
            additionalProperties=additional_properties,
            copyFrom=copy_from,
        )
        return self._client.call("createSchema", body=body, idempotency_key=idempotency_key)

    def list(self, *, vertical: str | None = None, templates: bool | None = None, limit: int | None = None) -> Pager:
        return self._client.paged("listSchemas", query={"vertical": vertical, "templates": templates, "limit": limit})

    def get(self, schema_id: str, *, version: int | None = None) -> ApiResult:
        return self._client.call("getSchema", path_params={"id": schema_id}, query={"version": version})

    def update(
        self,
        schema_id: str,
        *,
        name: str | None = None,
        vertical: str | None = None,
        fields: Iterable[Mapping[str, Any]] | None = None,
        additional_properties: bool | None = None,
    ) -> ApiResult:
        body = body_of(
            name=name,
            vertical=vertical,
            fields=[dict(field) for field in fields] if fields is not None else None,
            additionalProperties=additional_properties,
        )
        return self._client.call("updateSchema", path_params={"id": schema_id}, body=body)

    def delete(self, schema_id: str) -> None:
        self._client.call_raw("deleteSchema", path_params={"id": schema_id})

    def validate(self, schema_id: str, data: Mapping[str, Any], *, version: int | None = None) -> ApiResult:
        return self._client.call(
            "validateMetadata", path_params={"id": schema_id}, query={"version": version}, body=dict(data)
        )


class Links(Resource):
    """Links the resolver serves for the caller's items (docs/RESOLVER.md, Links)."""

    def create(
        self,
        *,
        gtin: str,
        link_type: str,
        href: str,
        title: str,
        type: str,
        lot: str | None = None,
        serial: str | None = None,
        hreflang: Iterable[str] | None = None,
        default: bool | None = None,
        idempotency_key: str | None = None,
    ) -> ApiResult:
        body = body_of(
            gtin=gtin,
            linkType=link_type,
            href=href,
            title=title,
            type=type,
            lot=lot,
            serial=serial,
            hreflang=list(hreflang) if hreflang is not None else None,
            default=default,
        )
        return self._client.call("createLink", body=body, idempotency_key=idempotency_key)

    def list(
        self,
        *,
        gtin: str | None = None,
        lot: str | None = None,
        serial: str | None = None,
        created_by: str | None = None,
        changed_by: str | None = None,
        limit: int | None = None,
    ) -> Pager:
        """The account's links, newest first; `created_by`/`changed_by` (an API key's id): that key's, after a leak."""
        query = {"gtin": gtin, "lot": lot, "serial": serial, "createdBy": created_by, "changedBy": changed_by, "limit": limit}
        return self._client.paged("listLinks", query=query)

    def update(
        self,
        link_id: str,
        *,
        link_type: str | None = None,
        href: str | None = None,
        title: str | None = None,
        type: str | None = None,
        hreflang: Iterable[str] | None = None,
        default: bool | None = None,
    ) -> ApiResult:
        body = body_of(
            linkType=link_type,
            href=href,
            title=title,
            type=type,
            hreflang=list(hreflang) if hreflang is not None else None,
            default=default,
        )
        return self._client.call("updateLink", path_params={"id": link_id}, body=body)

    def delete(self, link_id: str) -> None:
        self._client.call_raw("deleteLink", path_params={"id": link_id})

    def remove_made_by(self, created_by: str) -> ApiResult:
        """Removes every link the API key `created_by` made (after it leaked); answers `removed` and `more` (call again while `more`). Needs `*`."""
        return self._client.call("removeLinksMadeBy", query={"createdBy": created_by})


class Branding(Resource):
    """The brand's name, colours and logo on the resolver's page (docs/API.md, Account settings)."""

    def get(self) -> ApiResult:
        return self._client.call("getBranding")

    def update(
        self, *, display_name: str | None = None, primary_color: str | None = None, text_color: str | None = None
    ) -> ApiResult:
        """Sets the given fields; the others keep their values."""
        body = body_of(displayName=display_name, primaryColor=primary_color, textColor=text_color)
        return self._client.call("updateBranding", body=body)

    def upload_logo(self, image: bytes, *, content_type: Literal["image/png", "image/jpeg"] = "image/png") -> ApiResult:
        return self._client.call("uploadBrandingLogo", content=image, content_type=content_type)

    def delete_logo(self) -> ApiResult:
        return self._client.call("deleteBrandingLogo")


class Account(Resource):
    """Settings of the calling key's account."""

    def __init__(self, client: BaseClient) -> None:
        super().__init__(client)
        self.branding = Branding(client)


class Usage(Resource):
    """What the account used today against its limits, and per key."""

    def get(self) -> ApiResult:
        return self._client.call("getUsage")

    def keys(self, *, limit: int | None = None) -> Pager:
        """Each key's use, paged."""
        return self._client.paged("listKeyUsage", query={"limit": limit})


class System(Resource):
    def landing(self) -> ApiResult:
        return self._client.call("getLanding")

    def health(self) -> ApiResult:
        return self._client.call("getHealth")

    def ready(self) -> ApiResult:
        """200 when every dependency answers; raises ServiceUnavailableError naming the one that does not."""
        return self._client.call("getReady")

    def openapi(self) -> ApiResult:
        """The OpenAPI document the server serves."""
        return self._client.call("getOpenApiDocument")

    def ping(
        self,
        service: Literal["code-service", "verify-service", "auction-service", "compliance-service"],
        *,
        delay_ms: int | None = None,
    ) -> ApiResult:
        """Which replica of a service answered, and when."""
        body: Any = body_of(delayMs=delay_ms) if delay_ms is not None else None
        if body is None:
            return self._client.call("pingService", path_params={"service": service})
        return self._client.call("pingService", path_params={"service": service}, body=body)
