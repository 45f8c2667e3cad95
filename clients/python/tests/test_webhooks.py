"""A webhook the product delivers verifies with verify_webhook: v1 (HMAC) by the secret, v1a (Ed25519) by the key set."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import queue
import secrets
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from conftest import Brand
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from hallmark import WebhookVerificationError, verify_webhook

Delivery = tuple[dict[str, str], bytes]


@pytest.fixture()
def receiver() -> Iterator[tuple[str, queue.Queue[Delivery]]]:
    received: queue.Queue[Delivery] = queue.Queue()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            received.put(({k.lower(): v for k, v in self.headers.items()}, body))
            self.send_response(204)
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hooks", received
    server.shutdown()
    server.server_close()


def test_a_delivered_message_verifies_and_a_changed_one_does_not(
    brand: Brand, receiver: tuple[str, queue.Queue[Delivery]]
) -> None:
    url, received = receiver
    client = brand.client
    endpoint = client.webhooks.endpoints.create(url=url, event_types=["scan.suspicious"], description="python")
    assert endpoint.status == 201 and endpoint["secret"].startswith("whsec_")
    endpoint_id = endpoint["id"]
    assert client.webhooks.endpoints.test(endpoint_id).status == 202
    headers, body = received.get(timeout=20)

    jwks = dict(client.keys.jwks())
    payload = verify_webhook(body, headers, secret=endpoint["secret"], jwks=jwks, account_id=brand.account_id, environment="live")
    assert payload["type"] == "test" and payload["data"]["endpointId"] == endpoint_id

    with pytest.raises(WebhookVerificationError):
        verify_webhook(body.replace(b"test", b"tezt"), headers, secret=endpoint["secret"])
    with pytest.raises(WebhookVerificationError):
        verify_webhook(body.replace(b"test", b"tezt"), headers, jwks=jwks, account_id=brand.account_id, environment="live")
    with pytest.raises(ValueError, match="account_id"):
        verify_webhook(body, headers, jwks=jwks)  # every tenant's keys are in the set: whose must sign?
    with pytest.raises(WebhookVerificationError):
        verify_webhook(body, headers, secret="whsec_" + "A" * 44)
    with pytest.raises(WebhookVerificationError):
        verify_webhook(body, headers, jwks=jwks, account_id="acc_someone_else", environment="live")
    with pytest.raises(WebhookVerificationError):
        verify_webhook(body, headers, secret=endpoint["secret"], now=time.time() + 600)
    # During a rotation: a signature under any of the secrets given will do, and none under none.
    old_secret = "whsec_" + "A" * 44
    assert verify_webhook(body, headers, secret=[old_secret, endpoint["secret"]])["type"] == "test"
    with pytest.raises(WebhookVerificationError):
        verify_webhook(body, headers, secret=[old_secret, "whsec_" + "B" * 44])
    with pytest.raises(ValueError):
        verify_webhook(body, headers, secret=[])

    messages = list(client.webhooks.messages.list(endpoint_id))
    assert [m["id"] for m in messages] == [headers["webhook-id"]]
    # Its attempt, paged like the messages (recorded just after the receiver answered).
    deadline = time.time() + 10
    attempts = list(client.webhooks.messages.attempts(endpoint_id, messages[0]["id"], limit=1))
    while not attempts and time.time() < deadline:
        time.sleep(0.1)
        attempts = list(client.webhooks.messages.attempts(endpoint_id, messages[0]["id"], limit=1))
    assert [a["status"] for a in attempts] == ["succeeded"]
    client.webhooks.endpoints.delete(endpoint_id)


# Misconfigurations and header forms, on messages signed here as compliance-service signs them.

BODY = json.dumps({"type": "test", "timestamp": "2026-11-25T08:00:00.000Z", "environment": "live", "data": {}}).encode()
NOW = 1_795_000_000


def _v1(secret_key: bytes, message_id: str = "msg_1", timestamp: int = NOW) -> str:
    signed = f"{message_id}.{timestamp}.".encode() + BODY
    return "v1," + base64.b64encode(hmac.new(secret_key, signed, hashlib.sha256).digest()).decode()


def _headers(signature: str, timestamp: int = NOW) -> dict[str, str]:
    return {"webhook-id": "msg_1", "webhook-timestamp": str(timestamp), "webhook-signature": signature}


def test_an_empty_secret_is_refused_not_a_forgery_signed_under_an_empty_key() -> None:
    # Anyone can sign under an empty key; an unset environment variable reads as "".
    forged = _headers(_v1(b""))
    real = "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()
    for empty in ("", "whsec_", [real, ""]):
        with pytest.raises(ValueError, match="secret is empty"):
            verify_webhook(BODY, forged, secret=empty, now=NOW)


def test_a_tolerance_that_is_not_0_or_more_is_refused() -> None:
    key = secrets.token_bytes(32)
    secret = "whsec_" + base64.b64encode(key).decode()
    ten_years_old = NOW - 10 * 365 * 24 * 3600
    for tolerance in (float("nan"), -1.0):
        with pytest.raises(ValueError, match="tolerance must be"):
            old = _headers(_v1(key, timestamp=ten_years_old), ten_years_old)
            verify_webhook(BODY, old, secret=secret, tolerance=tolerance, now=NOW)
    assert verify_webhook(BODY, _headers(_v1(key)), secret=secret, tolerance=0, now=NOW)["type"] == "test"


def test_every_signature_of_two_header_lines_joined_with_a_comma_is_read() -> None:
    # A framework that joins repeated headers answers "v1,<old>, v1,<new>": the old entry ends with the join's comma.
    old_key, new_key = secrets.token_bytes(32), secrets.token_bytes(32)
    joined = _headers(f"{_v1(old_key)}, {_v1(new_key)}")
    for key in (old_key, new_key):
        assert verify_webhook(BODY, joined, secret="whsec_" + base64.b64encode(key).decode(), now=NOW)["type"] == "test"


def test_a_v1a_signature_by_a_key_retired_before_the_message_is_refused() -> None:
    # A signing key rotated out (perhaps because it leaked) signs nothing the service sends after.
    private_key = Ed25519PrivateKey.generate()
    raw = private_key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    signature = "v1a," + base64.b64encode(private_key.sign(f"msg_1.{NOW}.".encode() + BODY)).decode()
    headers = {**_headers(signature), "webhook-key-id": "kid-1"}

    def key_set(retired_at: str | None) -> dict[str, object]:
        jwk = {"kty": "OKP", "crv": "Ed25519", "kid": "kid-1", "x": base64.urlsafe_b64encode(raw).rstrip(b"=").decode(),
               "hallmark_account": "acc_1", "hallmark_environment": "live", "hallmark_key_type": "signing"}  # fmt: skip
        return {"keys": [jwk if retired_at is None else {**jwk, "hallmark_retired_at": retired_at}]}

    def at(seconds: int) -> str:
        return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")

    def verified(jwks: dict[str, object]) -> bool:
        try:
            verify_webhook(BODY, headers, jwks=jwks, account_id="acc_1", environment="live", now=NOW)
        except WebhookVerificationError:
            return False
        return True

    assert verified(key_set(None)) and verified(key_set(at(NOW - 30))) and verified(key_set(at(NOW + 3600)))
    assert not verified(key_set(at(NOW - 61)))
    assert not verified(key_set("yesterday"))
