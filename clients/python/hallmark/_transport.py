"""HTTP/1.1 over the standard library's http.client, one kept-alive connection per thread and origin."""

from __future__ import annotations

import heapq
import http.client
import itertools
import json
import re
import select
import socket
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ._errors import APIResponseTooLargeError

#: What the body is read in (a bounded answer is counted as it comes, whatever its declared length).
_READ_SIZE = 64 * 1024


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


def _first_of_each(lines: list[tuple[str, str]]) -> dict[str, str]:
    """The answer's headers by lower-case name; of a header sent twice (two Retry-After lines), the
    first counts, as docs/SDK.md says and the TypeScript client reads them."""
    headers: dict[str, str] = {}
    for name, value in lines:
        headers.setdefault(name.lower(), value)
    return headers


class ConnectionNotMade(OSError):
    """No connection could be made (refused, a name that does not resolve, unreachable, no connection
    within the timeout): the request never left, so the API cannot have acted on it.

    `error` is what connecting raised.
    """

    def __init__(self, error: OSError) -> None:
        super().__init__(str(error))
        self.error = error


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


class _Watchdog:
    """One daemon thread that shuts down the sockets of attempts still running at their deadline.

    http.client's timeout bounds each socket operation, so a server that sends one byte at a time
    could hold an attempt for ever; shutting its socket down makes the blocked read fail at once.
    """

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._deadlines: list[tuple[float, int]] = []
        self._cuts: dict[int, socket.socket] = {}
        self._numbers = itertools.count()
        self._thread: threading.Thread | None = None

    def watch(self, sock: socket.socket, deadline: float) -> int:
        with self._condition:
            number = next(self._numbers)
            self._cuts[number] = sock
            heapq.heappush(self._deadlines, (deadline, number))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="hallmark-deadlines", daemon=True)
                self._thread.start()
            self._condition.notify()
            return number

    def release(self, number: int) -> bool:
        """Stops watching; False when the deadline had already passed and the socket was shut down."""
        with self._condition:
            return self._cuts.pop(number, None) is not None

    def _run(self) -> None:
        with self._condition:
            while True:
                while self._deadlines and self._deadlines[0][1] not in self._cuts:
                    heapq.heappop(self._deadlines)
                if not self._deadlines:
                    self._condition.wait()
                    continue
                deadline, number = self._deadlines[0]
                left = deadline - time.monotonic()
                if left > 0:
                    self._condition.wait(left)
                    continue
                heapq.heappop(self._deadlines)
                sock = self._cuts.pop(number)
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


_watchdog = _Watchdog()


class MalformedAnswer(http.client.HTTPException):
    """An answer whose framing cannot be read (a Content-Length that is not a number): no whole answer,
    as http.client says of a bad status line or chunk size, so the client raises APIConnectionError."""


class _FinalResponse(http.client.HTTPResponse):
    """An HTTPResponse that reads past every interim 1xx answer (103 Early Hints, 102 Processing) to the
    final one; http.client itself skips only 100 Continue and would take a 103 for the answer."""

    def _read_status(self) -> tuple[str, int, str]:
        while True:
            version, status, reason = super()._read_status()  # type: ignore[misc]
            if not 100 <= status < 200:
                return version, status, reason
            # An interim answer's header fields (at most http.client's 100, each line bounded): dropped.
            http.client.parse_headers(self.fp)


#: A Content-Length: ASCII digits only (str.isdigit() takes "\xb2", which int() refuses; int() takes "1_0").
_CONTENT_LENGTH = re.compile(r"[0-9]+")


def _read_body(response: http.client.HTTPResponse, max_bytes: int | None) -> bytes:
    """The answer's body, given up once it is past `max_bytes`: by its Content-Length at once, else counted
    as it comes (a chunked body included: http.client reads one whatever Content-Length says)."""
    declared = response.getheader("content-length")
    if declared is not None and not _CONTENT_LENGTH.fullmatch(declared.strip()):
        raise MalformedAnswer(f"the answer's Content-Length {declared!r} is not a number")
    if max_bytes is None:
        return response.read()
    if declared is not None and int(declared) > max_bytes:
        raise _too_large(max_bytes)
    if declared is not None and not response.chunked:
        # http.client reads exactly the declared length (within bounds), however slowly it comes.
        return response.read()
    chunks: list[bytes] = []
    size = 0
    while chunk := response.read(_READ_SIZE):
        size += len(chunk)
        if size > max_bytes:
            raise _too_large(max_bytes)
        chunks.append(chunk)
    return b"".join(chunks)


def _answer_after_cut(connection: http.client.HTTPConnection, cut: OSError) -> http.client.HTTPResponse:
    """The answer a server sent before it closed a connection whose request it did not read whole; `cut` when there is none."""
    try:
        return connection.getresponse()
    except (OSError, http.client.HTTPException):
        raise cut from None


def _too_large(max_bytes: int) -> APIResponseTooLargeError:
    return APIResponseTooLargeError(
        f"the answer is larger than {max_bytes} bytes (max_response_bytes); it was not read. "
        "Make this call with a larger max_response_bytes (with_options)."
    )


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
        connection.response_class = _FinalResponse
        self._local.connection = connection
        return connection

    def _drop(self) -> None:
        connection: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        self._local.connection = None
        if connection is not None:
            connection.close()

    def send(
        self,
        method: str,
        target: str,
        headers: Mapping[str, str],
        body: bytes | None,
        timeout: float,
        max_bytes: int | None = None,
    ) -> RawResponse:
        """One attempt, the answer read whole within `timeout` seconds from its start.

        Raises OSError (TimeoutError past the deadline) or http.client.HTTPException when no whole
        answer came: ConnectionNotMade when the request never left. Raises APIResponseTooLargeError,
        the connection dropped, for a body past `max_bytes` (None: no bound).
        """
        deadline = time.monotonic() + timeout
        connection = self._connection(timeout)
        watched: int | None = None
        answered_early = False
        try:
            if connection.sock is None:
                self._connect(connection)
            if connection.sock is None:
                raise ConnectionError("no connection")
            watched = _watchdog.watch(connection.sock, deadline)
            try:
                connection.request(method, self.prefix + target, body=body, headers=dict(headers))
            except (BrokenPipeError, ConnectionResetError) as cut:
                # The server may have answered before reading the whole body (a 413 for a body past its
                # limit) and closed: that answer, already received, is read below; without one, the cut.
                response = _answer_after_cut(connection, cut)
                answered_early = True
            else:
                response = connection.getresponse()
            content = _read_body(response, max_bytes)
        except BaseException as error:
            self._drop()
            if watched is not None and not _watchdog.release(watched):
                raise TimeoutError(f"no whole answer within {timeout} s") from error
            raise
        if watched is not None and not _watchdog.release(watched):
            # The deadline passed as the answer ended: it is whole, but its socket was shut down.
            self._drop()
        elif response.will_close or answered_early:
            self._drop()
        return RawResponse(
            status=response.status,
            headers=_first_of_each(response.getheaders()),
            content=content,
        )

    def _connect(self, connection: http.client.HTTPConnection) -> None:
        try:
            connection.connect()
        except OSError as error:
            raise ConnectionNotMade(error) from error

    def close(self) -> None:
        self._drop()
