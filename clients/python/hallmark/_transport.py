"""HTTP/1.1 over the standard library's http.client, one kept-alive connection per thread and origin."""

from __future__ import annotations

import http.client
import json
import select
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit


@dataclass(frozen=True)
class RawResponse:
    """An answer as it came: status, headers (names in lower case) and the body's bytes."""

    status: int
    headers: dict[str, str]
    content: bytes
    #: How many attempts the call took (1 when the first answered).
    attempts: int = field(default=1, compare=False)

    @property
    def request_id(self) -> str | None:
        return self.headers.get("x-request-id")

    @property
    def text(self) -> str:
        return self.content.decode("utf-8")

    def json(self) -> Any:
        return json.loads(self.content) if self.content else None


def _closed_by_peer(connection: http.client.HTTPConnection) -> bool:
    """True when a kept-alive connection can be read before anything was sent: the server closed it while idle."""
    sock = connection.sock
    if sock is None:
        return False
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


class Transport:
    def __init__(self, base_url: str) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.prefix = parts.path.rstrip("/")
        self._local = threading.local()

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        connection: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        if connection is not None and _closed_by_peer(connection):
            self._drop()
            connection = None
        if connection is not None:
            connection.timeout = timeout
            if connection.sock is not None:
                connection.sock.settimeout(timeout)
            return connection
        if self.scheme == "https":
            connection = http.client.HTTPSConnection(self.host, self.port, timeout=timeout)
        else:
            connection = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        self._local.connection = connection
        return connection

    def _drop(self) -> None:
        connection: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        self._local.connection = None
        if connection is not None:
            connection.close()

    def send(self, method: str, target: str, headers: Mapping[str, str], body: bytes | None, timeout: float) -> RawResponse:
        """One attempt. Raises OSError or http.client.HTTPException when no answer came."""
        connection = self._connection(timeout)
        try:
            connection.request(method, self.prefix + target, body=body, headers=dict(headers))
            response = connection.getresponse()
            content = response.read()
        except BaseException:
            self._drop()
            raise
        if response.will_close:
            self._drop()
        return RawResponse(
            status=response.status,
            headers={name.lower(): value for name, value in response.getheaders()},
            content=content,
        )

    def close(self) -> None:
        self._drop()
