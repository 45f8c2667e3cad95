"""A proxy on 127.0.0.1 in front of the gateway that fails on purpose, as a test scripts it."""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

# What the proxy does with one request:
#   "forward"            pass it on and answer what the gateway answered
#   "forward-then-503"   pass it on, drop the gateway's answer and answer 503 (an answer lost on the way back)
#   "503"                answer 503 SERVICE_UNAVAILABLE without passing it on
#   "429:<seconds>"      answer 429 RATE_LIMITED with that Retry-After, without passing it on
#   "409:<seconds>"      answer 409 CONFLICT with that Retry-After (an Idempotency-Key whose first attempt still runs)
#   "reset"              close the connection without an answer
#   "sleep:<seconds>"    wait, then pass it on
#   "drip:<seconds>"     pass it on, then send the answer's body one byte at a time, that long apart
Action = str


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    at: float
    action: Action


@dataclass
class FaultyProxy:
    upstream: str
    #: Actions for the requests to come, in order; once used up, requests are forwarded.
    script: list[Action] = field(default_factory=list)
    seen: list[Seen] = field(default_factory=list)
    url: str = ""
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def next_action(self) -> Action:
        with self._lock:
            return self.script.pop(0) if self.script else "forward"

    def start(self) -> FaultyProxy:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        # shutdown() waits for the serving loop's next look (every 0.5 s by default): look often.
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def forwarded(self) -> list[Seen]:
        return [seen for seen in self.seen if seen.action in ("forward", "forward-then-503") or seen.action.startswith("sleep")]


def _envelope(code: str, message: str) -> bytes:
    return json.dumps({"error": {"code": code, "message": message}, "meta": {"requestId": "proxy"}}).encode()


def _handler(proxy: FaultyProxy) -> Callable[..., BaseHTTPRequestHandler]:
    target = urlsplit(proxy.upstream)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # An answer is written as its headers, then its body: without TCP_NODELAY the body waits for
        # the client's delayed ACK of the headers (some 40 ms an answer).
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: object) -> None:
            pass

        def _answer(self, status: int, body: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _drip(self, status: int, body: bytes, headers: dict[str, str], pause: float) -> None:
            self.close_connection = True
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(body)))
            self.send_header("connection", "close")
            self.end_headers()
            try:
                for index in range(len(body)):
                    self.wfile.write(body[index : index + 1])
                    self.wfile.flush()
                    time.sleep(pause)
            except OSError:
                pass  # the client gave up and closed the connection

        def _forward(self, body: bytes) -> tuple[int, bytes, dict[str, str]]:
            connection = http.client.HTTPConnection(target.hostname or "127.0.0.1", target.port or 80, timeout=30)
            try:
                headers = {name: value for name, value in self.headers.items() if name.lower() not in ("host", "connection")}
                connection.request(self.command, self.path, body=body or None, headers=headers)
                response = connection.getresponse()
                content = response.read()
                passed = {
                    name: value
                    for name, value in response.getheaders()
                    if name.lower() not in ("transfer-encoding", "connection", "content-length", "keep-alive")
                }
                return response.status, content, passed
            finally:
                connection.close()

        def _handle(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            action = proxy.next_action()
            proxy.seen.append(
                Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, time.monotonic(), action)
            )
            json_type = {"content-type": "application/json"}
            if action == "reset":
                self.close_connection = True
                self.connection.shutdown(2)
                return
            if action == "503":
                self._answer(503, _envelope("SERVICE_UNAVAILABLE", "failing on purpose"), json_type)
                return
            if action.startswith(("429:", "409:")):
                status = int(action[:3])
                headers = {**json_type, "retry-after": action.split(":", 1)[1]}
                code = "RATE_LIMITED" if status == 429 else "CONFLICT"
                self._answer(status, _envelope(code, "refused on purpose"), headers)
                return
            if action.startswith("sleep:"):
                time.sleep(float(action.split(":", 1)[1]))
            status, content, headers = self._forward(body)
            if action.startswith("drip:"):
                self._drip(status, content, headers, float(action.split(":", 1)[1]))
                return
            if action == "forward-then-503":
                self._answer(503, _envelope("SERVICE_UNAVAILABLE", "answer lost on purpose"), json_type)
                return
            self._answer(status, content, headers)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

    return Handler
