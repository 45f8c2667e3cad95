"""A webhook the product delivers verifies with verify_webhook: v1 (HMAC) by the secret, v1a (Ed25519) by the key set."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from conftest import Brand

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
