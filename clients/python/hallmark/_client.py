"""The client: authentication, the request loop with retries, idempotency keys and typed errors."""

from __future__ import annotations

import http.client
import json
import os
import time
import uuid
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlencode

from ._errors import APIConnectionError, APITimeoutError, error_from_response
from ._operations import OPERATIONS, Operation
from ._retry import is_retryable, retry_delay
from ._transport import RawResponse, Transport
from ._types import ApiResult, Page, Pager

__version__ = "0.1.0"

DEFAULT_BASE_URL = "http://localhost:8080"
DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_RETRIES = 2
#: A Retry-After longer than this (a daily quota spent) is not waited for: the error is raised at once.
DEFAULT_MAX_RETRY_AFTER = 60.0

Query = Mapping[str, str | int | float | bool | None]


class _NoBody:
    pass


NO_BODY: Any = _NoBody()


def _query_value(value: str | int | float | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class BaseClient:
    def __init__(
        self,
        api_key: str | None = None,
        *,
        base_url: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        max_retry_after: float = DEFAULT_MAX_RETRY_AFTER,
        default_headers: Mapping[str, str] | None = None,
    ) -> None:
        self.api_key = api_key if api_key is not None else os.environ.get("HALLMARK_API_KEY")
        self.base_url = (base_url or os.environ.get("HALLMARK_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        if max_retries < 0:
            raise ValueError("max_retries must be 0 or more")
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_retry_after = max_retry_after
        self.default_headers = dict(default_headers or {})
        self._transport = Transport(self.base_url)

    def close(self) -> None:
        """Closes this thread's kept-alive connection (others close when their threads end)."""
        self._transport.close()

    def __enter__(self) -> BaseClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # The request loop -------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Query | None = None,
        json_body: Any = NO_BODY,
        content: bytes | None = None,
        content_type: str | None = None,
        accept: str = "application/json",
        idempotency_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        authenticate: bool = True,
    ) -> RawResponse:
        """Sends a request with retries and answers the first 2xx/3xx; raises the error class of any other answer.

        `path` starts with `/` and is relative to base_url. Every attempt of one call carries the same
        `idempotency_key` when one is given.
        """
        send_headers: dict[str, str] = {
            "accept": accept,
            "user-agent": f"hallmark-python/{__version__}",
            **{name.lower(): value for name, value in self.default_headers.items()},
        }
        if authenticate and self.api_key:
            send_headers["x-api-key"] = self.api_key
        body: bytes | None = content
        if json_body is not NO_BODY:
            body = json.dumps(json_body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
            send_headers["content-type"] = "application/json"
        elif content is not None:
            send_headers["content-type"] = content_type or "application/octet-stream"
        if idempotency_key is not None:
            send_headers["idempotency-key"] = idempotency_key
        send_headers.update({name.lower(): value for name, value in (headers or {}).items()})
        target = path
        if query:
            pairs = [(name, _query_value(value)) for name, value in query.items() if value is not None]
            if pairs:
                target += ("&" if "?" in path else "?") + urlencode(pairs)

        wait_for = self.timeout if timeout is None else timeout
        retries = self.max_retries if max_retries is None else max_retries
        attempt = 0
        while True:
            try:
                response = self._transport.send(method, target, send_headers, body, wait_for)
            except (OSError, http.client.HTTPException) as error:
                # No answer (refused, cut, timed out): nothing says the API acted, and a creating
                # call's retry carries the same Idempotency-Key, so it is retried like a 503.
                if attempt < retries:
                    self._sleep(retry_delay(None, attempt, max_retry_after=self.max_retry_after))
                    attempt += 1
                    continue
                if isinstance(error, TimeoutError):
                    raise APITimeoutError(f"{method} {path}: no answer within {wait_for} s", cause=error) from error
                raise APIConnectionError(f"{method} {path}: {error!r}", cause=error) from error
            if response.status < 400:
                return RawResponse(response.status, response.headers, response.content, attempts=attempt + 1)
            if attempt < retries and is_retryable(response, idempotency_key=send_headers.get("idempotency-key")):
                delay = retry_delay(response, attempt, max_retry_after=self.max_retry_after)
                if delay is not None:
                    self._sleep(delay)
                    attempt += 1
                    continue
            raise error_from_response(response.status, response.headers, _json_or_none(response))

    @staticmethod
    def _sleep(seconds: float | None) -> None:
        if seconds:
            time.sleep(seconds)

    # Operations by operationId ----------------------------------------------------------------

    def _target(self, operation: Operation, path_params: Mapping[str, str]) -> str:
        path = operation.path
        for name in operation.path_params:
            value = path_params.get(name)
            if value is None or value == "":
                raise ValueError(f"{operation.operation_id}: {name} is required")
            path = path.replace("{" + name + "}", quote(str(value), safe=""))
        return path

    def call_raw(
        self,
        operation_id: str,
        *,
        path_params: Mapping[str, str] | None = None,
        query: Query | None = None,
        body: Any = NO_BODY,
        content: bytes | None = None,
        content_type: str | None = None,
        accept: str = "application/json",
        idempotency_key: str | None = None,
    ) -> RawResponse:
        """Calls an operation of the OpenAPI document by its operationId; a fresh Idempotency-Key when it takes one."""
        operation = OPERATIONS[operation_id]
        unknown = set(query or {}) - set(operation.query_params)
        if unknown:
            raise ValueError(f"{operation_id} takes no query parameter {sorted(unknown)}")
        key = idempotency_key
        if key is None and operation.idempotent:
            key = str(uuid.uuid4())
        return self.request(
            operation.method,
            self._target(operation, path_params or {}),
            query=query,
            json_body=body,
            content=content,
            content_type=content_type,
            accept=accept,
            idempotency_key=key if operation.idempotent else None,
        )

    def call(self, operation_id: str, **kwargs: Any) -> ApiResult:
        """call_raw, answering the JSON object as an ApiResult (an empty one for 202/204 without a body)."""
        response = self.call_raw(operation_id, **kwargs)
        data = response.json()
        return ApiResult(data if isinstance(data, dict) else {}, status=response.status, headers=response.headers, attempts=response.attempts)

    def paged(self, operation_id: str, *, path_params: Mapping[str, str] | None = None, query: Query | None = None) -> Pager:
        """A Pager over a cursor-paged list operation."""
        operation = OPERATIONS[operation_id]
        if operation.items is None:
            raise ValueError(f"{operation_id} is not a paged list")
        items_key = operation.items

        def fetch(cursor: str | None) -> Page:
            response = self.call_raw(operation_id, path_params=path_params, query={**(query or {}), "cursor": cursor})
            data = response.json()
            page = Page(data if isinstance(data, dict) else {}, status=response.status, headers=response.headers, attempts=response.attempts)
            page.data_key = items_key
            return page

        return Pager(fetch)


def _json_or_none(response: RawResponse) -> Any:
    try:
        return response.json()
    except ValueError:
        return None
