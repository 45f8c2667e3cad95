"""A server on 127.0.0.1 that answers each request as a test scripts it: what no product can be made to answer.

A script is a function of the request and its index (0 for the first) answering `(status, headers,
body)`, or `None` to close the connection without an answer once the request has been read (an
answer lost after the request arrived).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


Answer = tuple[int, dict[str, str], bytes]
Script = Callable[[Received, int], Answer | None]


def json_answer(status: int, body: Any, headers: dict[str, str] | None = None) -> Answer:
    return status, {"content-type": "application/json", **(headers or {})}, json.dumps(body).encode()


def envelope(status: int, code: str, headers: dict[str, str] | None = None) -> Answer:
    """An error in the API's envelope."""
    body = {"error": {"code": code, "message": f"{code} on purpose"}, "meta": {"requestId": "scripted"}}
    return json_answer(status, body, headers)


@dataclass
class ScriptedServer:
    script: Script = field(default=lambda _request, _index: json_answer(200, {}))
    received: list[Received] = field(default_factory=list)
    url: str = ""
    port: int = 0
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> ScriptedServer:
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), _handler(self))
        self._server.daemon_threads = True
        # shutdown() waits for the serving loop's next look (every 0.5 s by default): look often.
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def record(self, request: Received) -> int:
        with self._lock:
            self.received.append(request)
            return len(self.received) - 1


def _handler(server: ScriptedServer) -> Callable[..., BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: object) -> None:
            pass

        def _handle(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            request = Received(
                self.command,
                self.path,
                {name.lower(): value for name, value in self.headers.items()},
                self.rfile.read(length) if length else b"",
            )
            index = server.record(request)
            answer = server.script(request, index)
            if answer is None:
                self.close_connection = True
                self.connection.shutdown(2)
                return
            status, headers, body = answer
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("x-request-id", f"req-{index}")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

    return Handler
