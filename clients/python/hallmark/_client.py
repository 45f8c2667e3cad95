"""The client: authentication, the request loop with retries, idempotency keys and typed errors."""

from __future__ import annotations

import http.client
import json
import os
import re
import time
import uuid
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlencode

from ._errors import APIConnectionError, APITimeoutError, InvalidResponseError, error_from_response
from ._operations import OPERATIONS, Operation
from ._retry import is_retryable, is_safe_to_repeat, retry_delay
from ._transport import ConnectionNotMade, RawResponse, Transport
from ._types import ApiResult, Page, Pager

__version__ = "0.1.0"

DEFAULT_BASE_URL = "http://localhost:8080"
DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_RETRIES = 2
#: The largest answer a call reads unless told otherwise: 256 MiB (None: no bound).
DEFAULT_MAX_RESPONSE_BYTES: int | None = 256 * 1024 * 1024
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


def _path_pattern(template: str) -> re.Pattern[str]:
    """`/api/v1/links/{id}` as a pattern of its paths: a parameter is one segment."""
    return re.compile("[^/]+".join(re.escape(part) for part in re.split(r"\{[^}]+\}", template)))


#: The operations that keep the first answer of an Idempotency-Key (the others ignore the header).
_KEYED_OPERATIONS = [
    (operation.method, _path_pattern(operation.path)) for operation in OPERATIONS.values() if operation.idempotent
]


def _honours_idempotency_key(method: str, path: str) -> bool:
    """True when the operation at `method` and `path` answers a retried Idempotency-Key with its first answer."""
    return any(method == keyed and pattern.fullmatch(path) for keyed, pattern in _KEYED_OPERATIONS)


def _api_key_of(given: str | None) -> str | None:
    """The key as sent: white space around it (a line break read with the file that holds it) left out,
    as fetch leaves it out of a header. A key with any other character a header cannot carry is
    refused here, in words that do not repeat it (http.client's refusal quotes the value whole)."""
    if given is None:
        return None
    key = given.strip(" \t\r\n")
    if not all("\x21" <= char <= "\x7e" for char in key):
        raise ValueError("the API key holds a character an HTTP header cannot carry (a space, a control character or a non-ASCII letter)")
    return key


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
        max_response_bytes: int | None = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        self.api_key = _api_key_of(api_key if api_key is not None else os.environ.get("HALLMARK_API_KEY"))
        self.base_url = (base_url or os.environ.get("HALLMARK_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        if max_retries < 0:
            raise ValueError("max_retries must be 0 or more")
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_retry_after = max_retry_after
        self.default_headers = dict(default_headers or {})
        if max_response_bytes is not None and max_response_bytes < 0:
            raise ValueError("max_response_bytes must be 0 or more, or None for no bound")
        self.max_response_bytes = max_response_bytes
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
        `idempotency_key` when one is given. A request that is not safe to repeat (a POST or PATCH
        without an Idempotency-Key its operation honours, but for a verify) is retried only when the
        API did nothing: no connection made, or 429 (_retry.py).
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
        verb, bare_path = method.upper(), path.split("?", 1)[0]
        honoured_key = send_headers.get("idempotency-key") if _honours_idempotency_key(verb, bare_path) else None
        safe_to_repeat = is_safe_to_repeat(verb, bare_path, sends_honoured_key=honoured_key is not None)
        attempt = 0
        while True:
            try:
                response = self._transport.send(method, target, send_headers, body, wait_for, self.max_response_bytes)
            except (OSError, http.client.HTTPException) as error:
                # No answer (cut, timed out): the API may have acted, so only a request safe to
                # repeat is sent again; one that never left (no connection made) always is.
                if attempt < retries and (safe_to_repeat or isinstance(error, ConnectionNotMade)):
                    self._sleep(retry_delay(None, attempt, max_retry_after=self.max_retry_after))
                    attempt += 1
                    continue
                failure = error.error if isinstance(error, ConnectionNotMade) else error
                if isinstance(failure, TimeoutError):
                    raise APITimeoutError(f"{method} {path}: no answer within {wait_for} s", cause=failure) from error
                raise APIConnectionError(f"{method} {path}: {failure!r}", cause=failure) from error
            if response.status < 400:
                return RawResponse(response.status, response.headers, response.content, attempts=attempt + 1)
            if attempt < retries and is_retryable(response, idempotency_key=honoured_key, safe_to_repeat=safe_to_repeat):
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
            text = str(value)
            # As the TypeScript SDK refuses them (request.ts): a "." or ".." segment is resolved by a URL
            # library or a normalising proxy, moving the request to another operation with this key.
            for segment in text.split("/"):
                if segment in (".", ".."):
                    raise ValueError(f'{operation.operation_id}: the path parameter "{name}" may not hold a "{segment}" segment.')
            path = path.replace("{" + name + "}", quote(text, safe=""))
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
        """Calls an operation of the OpenAPI document by its operationId; a fresh Idempotency-Key when it takes one.

        A given `idempotency_key` is sent whatever the operation (only one that takes a key makes a
        retry safe with it). A 3xx from an operation that does not redirect is raised (`HTTP_3xx`).
        """
        operation = OPERATIONS[operation_id]
        unknown = set(query or {}) - set(operation.query_params)
        if unknown:
            raise ValueError(f"{operation_id} takes no query parameter {sorted(unknown)}")
        key = idempotency_key
        if key is None and operation.idempotent:
            key = str(uuid.uuid4())
        response = self.request(
            operation.method,
            self._target(operation, path_params or {}),
            query=query,
            json_body=body,
            content=content,
            content_type=content_type,
            accept=accept,
            idempotency_key=key,
        )
        if 300 <= response.status < 400 and not operation.redirects:
            raise error_from_response(response.status, response.headers, _json_or_none(response))
        return response

    def call(self, operation_id: str, **kwargs: Any) -> ApiResult:
        """call_raw, answering the JSON object as an ApiResult (an empty one for 202/204 without a body)."""
        response = self.call_raw(operation_id, **kwargs)
        data = _json_of(response, operation_id)
        return ApiResult(data if isinstance(data, dict) else {}, status=response.status, headers=response.headers, attempts=response.attempts)

    def paged(self, operation_id: str, *, path_params: Mapping[str, str] | None = None, query: Query | None = None) -> Pager:
        """A Pager over a cursor-paged list operation."""
        operation = OPERATIONS[operation_id]
        if operation.items is None:
            raise ValueError(f"{operation_id} is not a paged list")
        items_key = operation.items

        def fetch(cursor: str | None) -> Page:
            response = self.call_raw(operation_id, path_params=path_params, query={**(query or {}), "cursor": cursor})
            data = _json_of(response, operation_id)
            page = Page(data if isinstance(data, dict) else {}, status=response.status, headers=response.headers, attempts=response.attempts)
            page.data_key = items_key
            return page

        return Pager(fetch)


def _json_of(response: RawResponse, operation_id: str) -> Any:
    """The answer's JSON; InvalidResponseError when it is something else (a proxy's HTML page with 200)."""
    try:
        return response.json()
    except (ValueError, RecursionError) as error:
        # RecursionError: JSON nested deeper than the parser goes (no API answer is).
        kind = response.headers.get("content-type", "no content type").split(";")[0]
        raise InvalidResponseError(
            f"The answer to {operation_id} ({kind}) is not the JSON this operation answers.",
            status=response.status,
            headers=response.headers,
            body=response.content[:200],
        ) from error


def _json_or_none(response: RawResponse) -> Any:
    """An error answer's JSON; None when it is something else (raised as HTTP_<status>), nested too deep included."""
    try:
        return response.json()
    except (ValueError, RecursionError):
        return None
