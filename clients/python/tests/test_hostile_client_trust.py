"""A review (2026-12-06): the Python client against a server that lies to it, and its offline auditor against a forged export.

Attacked, and why:

- ``audit_export`` (hallmark/offline/audit_export.py) promises that "changing ... any event breaks a
  proof" and refuses a file that says two things to two readers (a member named twice). It parses
  the file with ``json``, which keeps a whole number exactly, then hashes it with ``canonical_json``,
  which turns any int past 2^53 into the nearest double (as JavaScript would). So an export whose
  evidence names certificate 90071992547409921 verified against a chain that recorded
  90071992547409920: the number Python itself read is not the one that was hashed. Found by this
  review and fixed: a whole number written otherwise than JavaScript writes its double makes the
  file invalid, here and in the TypeScript auditor (test/e2e/hostile-client-trust.test.ts).
- The client over HTTP, against stdlib servers on 127.0.0.1: a 307 to another origin must not carry
  the API key there; a Retry-After of a year must be raised at once, not slept; a page whose next
  cursor is not a string must not be followed for ever (the TypeScript SDK does follow it).

No product is needed: the export is signed here by a key made for the test, as test_offline.py does.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from hallmark import APIError, Hallmark, RateLimitedError, audit_export
from hallmark.offline.audit_export import hash_provenance_record
from hallmark.offline.checkpoint import note_key_hash
from hallmark.offline.merkle import leaf_hash, node_hash

CERTIFICATE = 90071992547409920  # 2^53 * 10: a double exactly
FORGED_CERTIFICATE = 90071992547409921  # another certificate, the same double


def _root(leaves: list[bytes]) -> bytes:
    if len(leaves) == 1:
        return leaves[0]
    split = 1 << ((len(leaves) - 1).bit_length() - 1)
    return node_hash(_root(leaves[:split]), _root(leaves[split:]))


def _path(index: int, leaves: list[bytes]) -> list[bytes]:
    if len(leaves) == 1:
        return []
    split = 1 << ((len(leaves) - 1).bit_length() - 1)
    if index < split:
        return _path(index, leaves[:split]) + [_root(leaves[split:])]
    return _path(index - split, leaves[split:]) + [_root(leaves[:split])]


def _signed_export_text() -> tuple[str, dict[str, Any]]:
    """The text of an export of three events (the second with a certificate number), as the service writes it, and its key set."""
    private_key = Ed25519PrivateKey.generate()
    public_key = private_key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    inputs = [
        ("registered", {"title": "Submariner 1680"}),
        ("condition_report", {"certificateNo": CERTIFICATE, "finding": "original dial"}),
        ("listed", {}),
    ]
    events: list[dict[str, Any]] = []
    previous: str | None = None
    for index, (event_type, data) in enumerate(inputs):
        occurred_at = f"2026-12-0{index + 1}T00:00:00.000Z"
        event_hash = hash_provenance_record(
            asset_id="obj_1", account_id="acc_house", environment="live", sequence=index + 1,
            type=event_type, occurred_at=occurred_at, data=data, prev_hash=previous,
        )  # fmt: skip
        events.append({"eventId": f"ev{index}", "sequence": index + 1, "type": event_type, "occurredAt": occurred_at,
                       "data": data, "prevHash": previous, "hash": event_hash, "leafIndex": index})  # fmt: skip
        previous = event_hash
    leaves = [leaf_hash(bytes.fromhex(event["hash"])) for event in events]
    for index, event in enumerate(events):
        event["leafHash"] = leaves[index].hex()
        event["auditPath"] = [node.hex() for node in _path(index, leaves)]
    root = _root(leaves)
    body = f"hallmark/assets/obj_1\n{len(leaves)}\n{base64.b64encode(root).decode()}\nhallmark-signed-at 2026-12-04T00:00:00.000Z\n"
    name = "hallmark/keys/kid-1"
    signature = base64.b64encode(note_key_hash(name, public_key) + private_key.sign(body.encode())).decode()
    document = {
        "format": "hallmark.compliance-export/1", "assetId": "obj_1", "owner": {"accountId": "acc_house", "environment": "live"},
        "treeSize": len(leaves), "rootHash": root.hex(),
        "checkpoint": {"note": f"{body}\n\u2014 {name} {signature}\n", "keyId": "kid-1"}, "events": events,
    }  # fmt: skip
    jwk = {"kty": "OKP", "crv": "Ed25519", "kid": "kid-1", "x": base64.urlsafe_b64encode(public_key).rstrip(b"=").decode(),
           "hallmark_account": "acc_house", "hallmark_environment": "live", "hallmark_key_type": "signing"}  # fmt: skip
    # As JavaScript writes the service's JSON: no spaces.
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False), {"keys": [jwk]}


def test_the_genuine_export_audits() -> None:
    text, jwks = _signed_export_text()
    assert f'"certificateNo":{CERTIFICATE}' in text
    report = audit_export(text, jwks)
    assert report.valid, report.problems


def test_defect_an_export_naming_another_certificate_past_2_to_the_53_is_not_valid() -> None:
    text, jwks = _signed_export_text()
    forged = text.replace(f'"certificateNo":{CERTIFICATE}', f'"certificateNo":{FORGED_CERTIFICATE}')
    assert forged != text
    # What the forged file says, read by the very parser the auditor uses: another certificate.
    assert json.loads(forged)["events"][1]["data"]["certificateNo"] == FORGED_CERTIFICATE
    report = audit_export(forged, jwks)
    assert not report.valid, "a history whose evidence was changed audits valid"


# A hostile HTTP server ---------------------------------------------------------------------------

Script = Callable[[BaseHTTPRequestHandler, int], tuple[int, dict[str, str], bytes]]


class _Server:
    """A ThreadingHTTPServer on 127.0.0.1 answering each request as `script` says; `seen` holds each request's path and API key."""

    def __init__(self) -> None:
        self.script: Script = lambda _request, _index: (200, {}, b"{}")
        self.seen: list[tuple[str, str | None]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                index = len(server.seen)
                server.seen.append((self.path, self.headers.get("x-api-key")))
                status, headers, body = server.script(self, index)
                self.send_response(status)
                for name, value in {"content-type": "application/json", **headers}.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        threading.Thread(target=self._http.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        self.url = f"http://127.0.0.1:{self._http.server_address[1]}"

    def stop(self) -> None:
        self._http.shutdown()
        self._http.server_close()


@pytest.fixture
def servers() -> Iterator[tuple[_Server, _Server]]:
    hostile, elsewhere = _Server(), _Server()
    yield hostile, elsewhere
    hostile.stop()
    elsewhere.stop()


API_KEY = "svc_live_review_secret_key"


def _page(items: list[dict[str, Any]], pagination: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    return 200, {}, json.dumps({"keys": items, "pagination": pagination}).encode()


def test_a_redirect_to_another_origin_is_raised_and_the_key_goes_nowhere(servers: tuple[_Server, _Server]) -> None:
    hostile, elsewhere = servers
    elsewhere.script = lambda _request, _index: _page([], {"nextCursor": None, "hasMore": False})
    hostile.script = lambda _request, _index: (307, {"location": f"{elsewhere.url}/api/v1/keys"}, b"")
    with Hallmark(API_KEY, base_url=hostile.url, max_retries=1, timeout=5) as client:
        with pytest.raises(APIError) as raised:
            client.keys.list().first_page()
    assert raised.value.code == "HTTP_307"
    assert elsewhere.seen == []


def test_a_retry_after_of_a_year_is_raised_at_once(servers: tuple[_Server, _Server]) -> None:
    hostile, _ = servers
    envelope = json.dumps({"error": {"code": "RATE_LIMITED", "message": "slow down"}}).encode()
    hostile.script = lambda _request, _index: (429, {"retry-after": "31536000"}, envelope)
    started = time.monotonic()
    with Hallmark(API_KEY, base_url=hostile.url, max_retries=2, timeout=5) as client:
        with pytest.raises(RateLimitedError):
            client.keys.list().first_page()
    assert time.monotonic() - started < 3 and len(hostile.seen) == 1


@pytest.mark.parametrize("cursor", [{}, ["x"], 7])
def test_a_next_cursor_that_is_not_a_string_is_not_followed_for_ever(servers: tuple[_Server, _Server], cursor: object) -> None:
    hostile, _ = servers
    # The server ends the loop itself after 20 pages; the client should not get that far.
    hostile.script = lambda _request, index: _page(
        [{"id": f"key_{index}"}],
        {"nextCursor": cursor, "hasMore": True} if index < 20 else {"nextCursor": None, "hasMore": False},
    )
    with Hallmark(API_KEY, base_url=hostile.url, max_retries=0, timeout=5) as client:
        try:
            list(client.keys.list())
        except APIError:
            pass
    assert len(hostile.seen) <= 3
