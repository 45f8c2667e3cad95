"""The largest answer a call reads (max_response_bytes): a misdirected base_url or a hostile server
cannot fill the process's memory, and a large export can still be read when asked for."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest
from scripted_server import ScriptedServer, json_answer

from hallmark import APIResponseTooLargeError, Hallmark, PayloadTooLargeError

MIB = 1024 * 1024


def big(size: int) -> dict[str, str]:
    return {"status": "ok", "padding": "x" * size}


def test_an_answer_declared_past_the_bound_is_refused_and_not_retried(scripted: ScriptedServer) -> None:
    scripted.script = lambda _request, _index: json_answer(200, big(2 * MIB))
    client = Hallmark("svc_test_key", base_url=scripted.url, max_response_bytes=MIB)
    with pytest.raises(APIResponseTooLargeError, match="1048576 bytes"):
        client.system.health()
    assert len(scripted.received) == 1


def test_a_larger_answer_is_read_when_the_call_allows_it(scripted: ScriptedServer) -> None:
    scripted.script = lambda _request, _index: json_answer(200, big(2 * MIB))
    client = Hallmark("svc_test_key", base_url=scripted.url, max_response_bytes=MIB)
    assert client.with_options(max_response_bytes=None).system.health()["status"] == "ok"
    assert client.with_options(max_response_bytes=4 * MIB).system.health()["status"] == "ok"
    # The default (256 MiB) reads it too, and with_options keeps a bound it is not told to change.
    assert Hallmark("svc_test_key", base_url=scripted.url).system.health()["status"] == "ok"
    with pytest.raises(APIResponseTooLargeError):
        client.with_options(max_retries=0).system.health()


class EndlessServer:
    """Answers every connection with a body of no declared length, sent until the client stops
    reading (at most 64 MiB): what a hostile server streaming without end looks like."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self.sent = 0
        self.cut = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        connection, _ = self._listener.accept()
        with connection:
            connection.recv(65536)
            connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n")
            chunk = b"x" * (64 * 1024)
            try:
                while self.sent < 64 * MIB:
                    connection.sendall(chunk)
                    self.sent += len(chunk)
            except OSError:
                self.cut.set()

    def close(self) -> None:
        self._listener.close()


@pytest.fixture()
def endless() -> Iterator[EndlessServer]:
    server = EndlessServer()
    yield server
    server.close()


def test_an_answer_of_no_declared_length_is_cut_once_past_the_bound(endless: EndlessServer) -> None:
    client = Hallmark("svc_test_key", base_url=endless.url, max_response_bytes=MIB, max_retries=0)
    with pytest.raises(APIResponseTooLargeError):
        client.system.health()
    assert endless.cut.wait(10), "the connection was closed, so the server could send no more"
    assert endless.sent < 16 * MIB


class EarlyAnswerServer:
    """Answers 413 as soon as it has the headers and closes without reading the body, as a server does
    with a body past its limit: the client's send of the rest then fails (a broken pipe or a reset)."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        connection, _ = self._listener.accept()
        with connection:
            received = b""
            while b"\r\n\r\n" not in received:
                received += connection.recv(65536)
            body = (
                b'{"error":{"code":"PAYLOAD_TOO_LARGE","message":"The body is larger than 1 MB."},'
                b'"meta":{"requestId":"early"}}'
            )
            connection.sendall(
                b"HTTP/1.1 413 Payload Too Large\r\ncontent-type: application/json\r\nconnection: close\r\n"
                + f"content-length: {len(body)}\r\n\r\n".encode()
                + body
            )
            # Closed with the body unread: the kernel resets the connection.

    def close(self) -> None:
        self._listener.close()


def test_an_answer_sent_before_the_body_was_read_is_raised_as_its_code() -> None:
    # Before, the broken pipe of the send hid the answer: APIConnectionError instead of the 413
    # (the Python suite's PAYLOAD_TOO_LARGE check failed that way once against the product).
    server = EarlyAnswerServer()
    try:
        client = Hallmark("svc_test_key", base_url=server.url, max_retries=0)
        with pytest.raises(PayloadTooLargeError):
            client.codes.generate(gtin="09506000134352", serial_number="A", metadata={"blob": "x" * (32 * MIB)})
    finally:
        server.close()
