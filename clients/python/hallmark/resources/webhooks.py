from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal

from .._types import ApiResult, Pager
from ._base import Resource, body_of

if TYPE_CHECKING:
    from .._client import BaseClient


class Endpoints(Resource):
    """The account's webhook endpoints, their messages and attempts (docs/WEBHOOKS.md)."""

    def create(
        self,
        *,
        url: str,
        event_types: Iterable[str],
        description: str | None = None,
        idempotency_key: str | None = None,
    ) -> ApiResult:
        """A new endpoint (201) with its signing `secret` (whsec_..., shown only here)."""
        body = body_of(url=url, eventTypes=list(event_types), description=description)
        return self._client.call("createWebhookEndpoint", body=body, idempotency_key=idempotency_key)

    def list(self, *, limit: int | None = None, created_by: str | None = None, changed_by: str | None = None) -> Pager:
        """The endpoints, oldest first; `created_by` / `changed_by`: only those an API key (its id) made / changed last."""
        return self._client.paged(
            "listWebhookEndpoints", query={"limit": limit, "createdBy": created_by, "changedBy": changed_by}
        )

    def get(self, endpoint_id: str) -> ApiResult:
        return self._client.call("getWebhookEndpoint", path_params={"id": endpoint_id})

    def update(
        self,
        endpoint_id: str,
        *,
        url: str | None = None,
        event_types: Iterable[str] | None = None,
        description: str | None = None,
        enabled: bool | None = None,
    ) -> ApiResult:
        body = body_of(
            url=url,
            eventTypes=list(event_types) if event_types is not None else None,
            description=description,
            enabled=enabled,
        )
        return self._client.call("updateWebhookEndpoint", path_params={"id": endpoint_id}, body=body)

    def delete(self, endpoint_id: str) -> None:
        self._client.call_raw("deleteWebhookEndpoint", path_params={"id": endpoint_id})

    def disable(self, endpoint_id: str) -> ApiResult:
        return self._client.call("disableWebhookEndpoint", path_params={"id": endpoint_id})

    def rotate_secret(self, endpoint_id: str) -> ApiResult:
        return self._client.call("rotateWebhookSecret", path_params={"id": endpoint_id})

    def test(self, endpoint_id: str) -> ApiResult:
        """Queues a `test` message to the endpoint (202)."""
        return self._client.call("testWebhookEndpoint", path_params={"id": endpoint_id})

    def replay_failed(self, endpoint_id: str, *, since: str, until: str | None = None) -> ApiResult:
        """Sends every failed message created in [since, until) again (202 `{ replayed }`)."""
        return self._client.call(
            "replayFailedWebhookMessages", path_params={"id": endpoint_id}, body=body_of(since=since, until=until)
        )


class Messages(Resource):
    """What was sent to an endpoint, each attempt, and sending one again."""

    def list(
        self,
        endpoint_id: str,
        *,
        status: Literal["pending", "delivered", "failed"] | None = None,
        limit: int | None = None,
    ) -> Pager:
        """The endpoint's messages, newest first."""
        return self._client.paged(
            "listWebhookMessages", path_params={"id": endpoint_id}, query={"status": status, "limit": limit}
        )

    def attempts(self, endpoint_id: str, message_id: str, *, limit: int | None = None) -> Pager:
        """The message's delivery attempts, oldest first (every replay's are kept)."""
        return self._client.paged(
            "listWebhookAttempts", path_params={"id": endpoint_id, "messageId": message_id}, query={"limit": limit}
        )

    def replay(self, endpoint_id: str, message_id: str) -> ApiResult:
        """Sends the message again now, with the same webhook-id (202)."""
        return self._client.call("replayWebhookMessage", path_params={"id": endpoint_id, "messageId": message_id})


class Webhooks(Resource):
    def __init__(self, client: BaseClient) -> None:
        super().__init__(client)
        self.endpoints = Endpoints(client)
        self.messages = Messages(client)
