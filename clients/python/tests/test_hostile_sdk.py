"""The Python client against a hostile server on 127.0.0.1 and hostile offline inputs, found by a review
of the client libraries (2026-12-04).

What they show: an interim 1xx answer (103 Early Hints) is skipped for the final one; a Content-Length
of non-ASCII digits, and JSON nested past the parser's recursion limit (a success or an error answer),
are raised as HallmarkErrors, never a bare ValueError or RecursionError; max_response_bytes bounds a
chunked answer that also declares a small Content-Length; a "." or ".." path parameter is refused
before anything is sent, as the TypeScript SDK refuses it; and audit_export reports (never raises for)
data nested too deep to hash, and refuses an export naming no owner under a key naming no account.
"""

from __future__ import annotations

import base64
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from hallmark import (
    Hallmark,
    HallmarkError,
    InvalidResponseError,
    RateLimitedError,
    ValidationError,
    WebhookVerificationError,
    audit_export,
    verify_webhook,
)
from hallmark.offline.audit_export import hash_provenance_record
from hallmark.offline.checkpoint import note_key_hash
from hallmark.offline.merkle import leaf_hash

#: Writes the raw bytes answering request number `index` (0 for the first) on the socket.
Responder = Callable[[socket.socket, int], None]


class RawServer:
    """A server on 127.0.0.1 that writes raw bytes: what http.server cannot be made to send."""

    def __init__(self, respond: Responder) -> None:
        self.respond = respond
        self.count = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        buffer = b""
        with connection:
            while True:
                while b"\r\n\r\n" not in buffer:
                    chunk = connection.recv(65536)
                    if not chunk:
                        return
                    buffer += chunk
                head, _, buffer = buffer.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                while len(buffer) < length:
                    buffer += connection.recv(65536)
                buffer = buffer[length:]
                with self._lock:
                    index = self.count
                    self.count += 1
                try:
                    self.respond(connection, index)
                except OSError:
                    return

    def close(self) -> None:
        self._listener.close()


def http_answer(status: int, body: bytes, headers: dict[str, str] | None = None) -> bytes:
    lines = [f"HTTP/1.1 {status} X", "content-type: application/json", f"content-length: {len(body)}"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


@pytest.fixture()
def raw() -> Iterator[Callable[[Responder], RawServer]]:
    servers: list[RawServer] = []

    def start(respond: Responder) -> RawServer:
        server = RawServer(respond)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


LINK = "https://id.example/01/09506000134352/21/A?sig=x"


def test_an_early_hints_103_is_not_taken_for_the_answer(raw: Callable[[Responder], RawServer]) -> None:
    """A 1xx (103 Early Hints, which CDNs send) is informational: the answer is the final response after it."""
    verdict = json.dumps({"verdict": "AUTHENTIC", "assetId": "a"}).encode()

    def respond(connection: socket.socket, _index: int) -> None:
        connection.sendall(b"HTTP/1.1 103 Early Hints\r\nlink: </style.css>; rel=preload\r\n\r\n")
        connection.sendall(http_answer(200, verdict))

    server = raw(respond)
    with Hallmark("svc_test_x", base_url=server.url, max_retries=0, timeout=5) as client:
        result = client.codes.verify(url=LINK)
        assert result.status == 200
        assert result.get("verdict") == "AUTHENTIC"


def test_a_content_length_of_non_ascii_digits_raises_a_hallmark_error(raw: Callable[[Responder], RawServer]) -> None:
    """Everything the client raises for a call is a HallmarkError (docs/SDK.md, Errors): not a bare ValueError."""

    def respond(connection: socket.socket, _index: int) -> None:
        # '\xb2' (superscript two) is a digit to str.isdigit() but not to int().
        connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: \xb2\r\nconnection: close\r\n\r\n{}")
        connection.shutdown(socket.SHUT_WR)

    server = raw(respond)
    with Hallmark("svc_test_x", base_url=server.url, max_retries=0, timeout=5) as client:
        try:
            client.codes.verify(url=LINK)
        except HallmarkError:
            pass
        except Exception as error:  # noqa: BLE001 - what is raised is the finding
            pytest.fail(f"raised {type(error).__name__}: {error!r}, not a HallmarkError")


def test_a_deeply_nested_success_is_an_invalid_response_error(raw: Callable[[Responder], RawServer]) -> None:
    """A 200 whose JSON nests past the parser's recursion limit is not the operation's JSON: InvalidResponseError."""
    body = b"[" * 200_000 + b"]" * 200_000

    def respond(connection: socket.socket, _index: int) -> None:
        connection.sendall(http_answer(200, body))

    server = raw(respond)
    with Hallmark("svc_test_x", base_url=server.url, max_retries=0, timeout=5) as client:
        try:
            client.codes.verify(url=LINK)
        except InvalidResponseError:
            pass
        except BaseException as error:  # noqa: BLE001 - what is raised is the finding
            pytest.fail(f"raised {type(error).__name__}, not InvalidResponseError")
        else:
            pytest.fail("a 200 that is not the operation's JSON was taken as a success")


def test_a_deeply_nested_error_answer_is_raised_as_an_api_error(raw: Callable[[Responder], RawServer]) -> None:
    """An error answer whose body nests past the recursion limit is still an APIError (HTTP_500)."""
    body = b"[" * 200_000 + b"]" * 200_000

    def respond(connection: socket.socket, _index: int) -> None:
        connection.sendall(http_answer(500, body))

    server = raw(respond)
    with Hallmark("svc_test_x", base_url=server.url, max_retries=0, timeout=5) as client:
        try:
            client.codes.verify(url=LINK)
        except HallmarkError:
            pass
        except BaseException as error:  # noqa: BLE001 - what is raised is the finding
            pytest.fail(f"raised {type(error).__name__}, not a HallmarkError")


# Offline audit -------------------------------------------------------------------------------

def _one_event_export(
    *, account_id: str | None, environment: str | None, data: Any
) -> tuple[dict[str, Any], dict[str, Any], Ed25519PrivateKey]:
    """An export of one event signed here, its owner as given (None: the export names none)."""
    private_key = Ed25519PrivateKey.generate()
    public_key = private_key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    event_hash = hash_provenance_record(
        asset_id="code_1", account_id=str(account_id), environment=str(environment), sequence=1,
        type="code.generated", occurred_at="2026-01-01T00:00:00.000Z", data=data, prev_hash=None,
    )  # fmt: skip
    leaf = leaf_hash(bytes.fromhex(event_hash))
    event = {"eventId": "ev0", "sequence": 1, "type": "code.generated", "occurredAt": "2026-01-01T00:00:00.000Z",
             "data": data, "prevHash": None, "hash": event_hash, "leafIndex": 0, "leafHash": leaf.hex(), "auditPath": []}  # fmt: skip
    body = f"hallmark/assets/code_1\n1\n{base64.b64encode(leaf).decode()}\n"
    name = "hallmark/keys/kid-1"
    signature = base64.b64encode(note_key_hash(name, public_key) + private_key.sign(body.encode())).decode()
    document: dict[str, Any] = {
        "format": "hallmark.compliance-export/1", "assetId": "code_1", "treeSize": 1, "rootHash": leaf.hex(),
        "checkpoint": {"note": f"{body}\n\u2014 {name} {signature}\n", "keyId": "kid-1"}, "events": [event],
    }  # fmt: skip
    if account_id is not None or environment is not None:
        document["owner"] = {"accountId": account_id, "environment": environment}
    jwk: dict[str, Any] = {"kty": "OKP", "crv": "Ed25519", "kid": "kid-1", "hallmark_key_type": "signing",
                           "x": base64.urlsafe_b64encode(public_key).rstrip(b"=").decode()}  # fmt: skip
    if account_id is not None:
        jwk["hallmark_account"] = account_id
    if environment is not None:
        jwk["hallmark_environment"] = environment
    return document, {"keys": [jwk]}, private_key


def test_the_genuine_one_event_export_audits() -> None:
    """The helper's export is genuine (so the tests below spoil only what they say)."""
    document, jwks, _ = _one_event_export(account_id="acc_brand", environment="live", data={"step": 0})
    report = audit_export(document, jwks)
    assert report.valid, report.problems


def test_a_key_set_without_account_and_environment_does_not_vouch_for_an_export_without_owner() -> None:
    """docs/SDK.md: the checkpoint must be under a signing key of the asset's own account and environment,
    "a key set without those members fails" (and the TypeScript auditExport refuses it: an unnamed account).
    Python compared the key's missing hallmark_account (None) with the export's missing owner (None) and
    found them equal."""
    document, jwks, _ = _one_event_export(account_id=None, environment=None, data={"step": 0})
    report = audit_export(document, jwks)
    assert not report.valid, "an export naming no owner audited as valid under a key naming no account"
    assert any("an unnamed account" in problem for problem in report.problems), report.problems


def test_an_export_with_deeply_nested_data_is_a_problem_not_an_exception() -> None:
    """audit_export never raises for a malformed export (docs/SDK.md, Offline checks); the TypeScript
    auditExport reports "cannot be audited". Data nested 600 deep, which json.loads reads (as
    hallmark.compliance.export() does), must not raise RecursionError from canonical_json."""
    document, jwks, _ = _one_event_export(account_id="acc_brand", environment="live", data={"step": 0})
    document["events"][0]["data"] = json.loads('{"a":' * 600 + "{}" + "}" * 600)
    try:
        report = audit_export(document, jwks)
    except RecursionError:
        pytest.fail("audit_export raised RecursionError for an export with deeply nested data")
    assert not report.valid


# Answer size and request paths ------------------------------------------------------------------


def test_a_chunked_answer_that_also_declares_a_small_content_length_is_still_bounded(
    raw: Callable[[Responder], RawServer],
) -> None:
    """max_response_bytes bounds every answer (docs/SDK.md): a hostile server that sends Transfer-Encoding:
    chunked (which http.client reads to its end) with a small Content-Length (which _read_body trusts) must
    not get an answer of any size read."""
    limit = 64 * 1024
    chunk = b" " * 65536

    def respond(connection: socket.socket, _index: int) -> None:
        head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\ncontent-length: 2\r\n\r\n"
        connection.sendall(head + b"2\r\n{}\r\n")
        for _ in range(64):  # 4 MiB of white space after the JSON: 64 times the bound
            connection.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
        connection.sendall(b"0\r\n\r\n")

    server = raw(respond)
    with Hallmark("svc_test_x", base_url=server.url, max_retries=0, timeout=10, max_response_bytes=limit) as client:
        try:
            client.codes.verify(url=LINK)
        except HallmarkError as error:
            assert type(error).__name__ == "APIResponseTooLargeError", repr(error)
        else:
            pytest.fail(f"an answer of more than 4 MiB was read whole under max_response_bytes={limit}")


def test_a_dot_dot_path_parameter_is_refused_as_the_typescript_sdk_refuses_it(raw: Callable[[Responder], RawServer]) -> None:
    """The TypeScript SDK refuses a path parameter that is "." or ".." (request.ts: a proxy or URL resolves
    them, moving the request to another operation). The Python client sent POST /api/v1/accounts/../gtins,
    which a normalising proxy routes to POST /api/v1/gtins (claimGtin), with the caller's key."""
    seen: list[int] = []

    def respond(connection: socket.socket, index: int) -> None:
        seen.append(index)
        connection.sendall(http_answer(200, b"{}"))

    server = raw(respond)
    with Hallmark("svc_test_x", base_url=server.url, max_retries=0, timeout=5) as client:
        with pytest.raises(ValueError):
            client.accounts.gtins.grant("..", prefix="950600012")
    assert seen == [], "a request with a '..' path segment was sent"


def test_a_webhook_body_nested_too_deep_is_refused_as_not_json() -> None:
    """A forged body checked by key set alone: json.loads raised RecursionError, not the library's error."""
    raw = b"[" * 200_000 + b"]" * 200_000
    headers = {"webhook-id": "msg_1", "webhook-timestamp": str(int(time.time())), "webhook-signature": "v1a,AAAA"}
    with pytest.raises(WebhookVerificationError, match="not JSON"):
        verify_webhook(raw, headers, jwks={"keys": []}, account_id="acc_1", environment="live")


# Found by a second review (2026-12-07): a hostile server against both clients ----------------------


def test_an_export_read_as_a_dict_with_a_number_no_double_holds_is_not_valid() -> None:
    """docs/COMPLIANCE.md: a whole number written past what a double holds is hashed by JavaScript as its
    neighbour. Read with json.loads (as hallmark.compliance.export() reads it), the dict holds the exact
    number while canonical_json hashed its double: the export audited valid while showing a number
    other than the one hashed. The text of the same export was already invalid."""
    document, jwks, _ = _one_event_export(account_id="acc_brand", environment="live", data={"certificate": 90071992547409920})
    assert audit_export(document, jwks).valid
    document["events"][0]["data"] = {"certificate": 90071992547409921}
    report = audit_export(document, jwks)
    assert not report.valid, "an export whose dict shows a number other than the one hashed audited as valid"
    assert audit_export(json.dumps(document), jwks).valid is False


def test_an_export_with_a_number_past_any_double_is_a_problem_not_an_exception() -> None:
    """docs/SDK.md: audit_export never raises for a malformed export; float() of a 401-digit integer
    raised OverflowError, for a dict and for the file's text."""
    document, jwks, _ = _one_event_export(account_id="acc_brand", environment="live", data={"step": 0})
    document["events"][0]["data"] = {"n": 10**400}
    given_forms: list[dict[str, Any] | str] = [document, json.dumps(document)]
    for given in given_forms:
        try:
            report = audit_export(given, jwks)
        except OverflowError:
            pytest.fail("audit_export raised OverflowError for a number past any double")
        assert not report.valid


def test_an_api_key_read_with_its_line_break_is_sent_without_it_and_a_bad_one_is_refused_unrepeated(
    raw: Callable[[Responder], RawServer],
) -> None:
    """A key read from a file (open(path).read()) ends with a line break: http.client refused the header
    with a ValueError that quoted the key whole, into tracebacks and logs. The TypeScript SDK's fetch
    leaves the white space out; so does the client now. Any other character a header cannot carry is
    refused when the client is made, in words that do not repeat the key."""
    def respond(connection: socket.socket, _index: int) -> None:
        connection.sendall(http_answer(200, b'{"requests":{}}'))

    server = raw(respond)
    with Hallmark("svc_live_SECRET\n", base_url=server.url, max_retries=0, timeout=5) as client:
        assert client.api_key == "svc_live_SECRET"
        client.request("GET", "/api/v1/usage")
    assert server.count == 1
    for bad in ("svc_live_SE\nCRET", "svc_live_SE CRET", "svc_live_SÉCRET", "svc_live_SE\x00CRET"):
        with pytest.raises(ValueError) as refused:
            Hallmark(bad, base_url=server.url)
        assert "SE" not in str(refused.value) and "CRET" not in str(refused.value), str(refused.value)


def test_of_two_retry_after_lines_the_first_counts(raw: Callable[[Responder], RawServer]) -> None:
    """docs/SDK.md: "of two values … the first counts", as the TypeScript SDK reads them. The headers'
    dict kept the last line: a 429 with Retry-After: 3600 then Retry-After: 0 was retried at once."""

    def respond(connection: socket.socket, _index: int) -> None:
        body = b'{"error":{"code":"RATE_LIMITED","message":"slow down"},"meta":{"requestId":"r"}}'
        connection.sendall(http_answer(429, body, {"retry-after": "3600"}).replace(b"\r\n\r\n", b"\r\nretry-after: 0\r\n\r\n", 1))

    server = raw(respond)
    with Hallmark("svc_test_x", base_url=server.url, max_retries=3, timeout=5, max_retry_after=60) as client:
        with pytest.raises(RateLimitedError) as refused:
            client.codes.verify(url=LINK)
    assert server.count == 1, f"retried {server.count - 1} times after Retry-After: 3600"
    assert refused.value.retry_after == 3600


def test_validation_error_fields_skip_entries_that_are_not_objects(raw: Callable[[Responder], RawServer]) -> None:
    """A malformed 400 (fields [1, "ab"]): reading ValidationError.fields raised TypeError."""

    def respond(connection: socket.socket, _index: int) -> None:
        body = b'{"error":{"code":"VALIDATION_ERROR","message":"bad","details":{"fields":[1,"ab",{"field":"url"}]}}}'
        connection.sendall(http_answer(400, body))

    server = raw(respond)
    with Hallmark("svc_test_x", base_url=server.url, max_retries=0, timeout=5) as client:
        with pytest.raises(ValidationError) as refused:
            client.codes.verify(url=LINK)
    assert refused.value.fields == [{"field": "url"}]
