"""Which published key may sign what the service alone signs: a compliance checkpoint and a v1a webhook.

The service signs both only with the account's own signing key (`hallmark_key_type` "signing") of the
asset's or message's environment. A public key the account registered (a thief with a leaked test `*`
key can register one; its private half is outside the service) or the account's key of the other
environment vouches for neither. No running product needed; test/e2e/hostile-audit.test.ts is the
end-to-end form.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from hallmark import WebhookVerificationError, audit_export, verify_webhook
from hallmark.offline.audit_export import hash_provenance_record
from hallmark.offline.checkpoint import note_key_hash
from hallmark.offline.merkle import leaf_hash, node_hash

OWNER = {"accountId": "acc_brand", "environment": "live"}


class Key:
    def __init__(self, kid: str) -> None:
        self.kid = kid
        self.private = Ed25519PrivateKey.generate()
        self.public = self.private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)

    def published(self, **members: Any) -> dict[str, Any]:
        """As keyring.jwks() publishes it; a member given None is left out."""
        jwk: dict[str, Any] = {
            "kty": "OKP",
            "crv": "Ed25519",
            "x": base64.urlsafe_b64encode(self.public).rstrip(b"=").decode(),
            "kid": self.kid,
            "alg": "EdDSA",
            "use": "sig",
            "hallmark_environment": "live",
            "hallmark_account": "acc_brand",
            "hallmark_key_type": "signing",
            "hallmark_gtins": [],
            "hallmark_gtin_prefixes": [],
        }
        jwk.update(members)
        return {name: value for name, value in jwk.items() if value is not None}


def export_signed_by(key: Key) -> dict[str, Any]:
    """A two-event history of the owner's asset whose checkpoint `key` signed."""
    asset_id = "code_victim"
    events: list[dict[str, Any]] = []
    previous: str | None = None
    for index, (kind, data) in enumerate([("code.generated", {"gtin": "09506000134352"}), ("authenticated", {"by": "Lab"})]):
        occurred_at = f"2026-01-0{index + 1}T00:00:00.000Z"
        digest = hash_provenance_record(
            asset_id=asset_id,
            account_id=OWNER["accountId"],
            environment=OWNER["environment"],
            sequence=index + 1,
            type=kind,
            occurred_at=occurred_at,
            data=data,
            prev_hash=previous,
        )
        events.append(
            {"eventId": f"ev{index}", "sequence": index + 1, "type": kind, "occurredAt": occurred_at, "data": data}
            | {"prevHash": previous, "hash": digest, "leafIndex": index}
        )
        previous = digest
    leaves = [leaf_hash(bytes.fromhex(event["hash"])) for event in events]
    for event, leaf, sibling in zip(events, leaves, reversed(leaves), strict=True):
        event["leafHash"], event["auditPath"] = leaf.hex(), [sibling.hex()]
    root = node_hash(leaves[0], leaves[1])
    body = f"hallmark/assets/{asset_id}\n2\n{base64.b64encode(root).decode()}\n"
    name = f"hallmark/keys/{key.kid}"
    signature = base64.b64encode(note_key_hash(name, key.public) + key.private.sign(body.encode())).decode()
    note = f"{body}\n\u2014 {name} {signature}\n"
    return {
        "format": "hallmark.compliance-export/1",
        "assetId": asset_id,
        "owner": OWNER,
        "treeSize": 2,
        "rootHash": root.hex(),
        "checkpoint": {"note": note, "keyId": key.kid},
        "events": events,
    }


SERVICE = Key("kid-service")


def test_an_audit_accepts_the_owners_signing_key_of_the_assets_environment() -> None:
    report = audit_export(export_signed_by(SERVICE), {"keys": [SERVICE.published()]})
    assert report.valid, report.problems
    assert (report.tree_size, report.events_checked) == (2, 2)
    # The report names whose history it checked, and in which environment.
    assert report.owner == {"accountId": "acc_brand", "environment": "live"}


def test_an_audit_refuses_a_public_key_the_account_registered() -> None:
    registered = Key("kid-registered")
    jwks = {"keys": [SERVICE.published(), registered.published(hallmark_key_type="public")]}
    report = audit_export(export_signed_by(registered), jwks)
    assert not report.valid and report.tree_size is None
    assert report.problems == [
        "Checkpoint: signed by key kid-registered, a public key (one the account registered and holds the private half of), "
        "not by a signing key the service holds for account acc_brand."
    ]


def test_an_audit_refuses_the_owners_signing_key_of_the_other_environment() -> None:
    test_key = Key("kid-test")
    jwks = {"keys": [SERVICE.published(), test_key.published(hallmark_environment="test")]}
    report = audit_export(export_signed_by(test_key), jwks)
    assert not report.valid
    assert "of the test environment, not by a key of the asset's environment live" in report.problems[0]


def test_an_audit_refuses_a_key_set_without_hallmark_key_type() -> None:
    report = audit_export(export_signed_by(SERVICE), {"keys": [SERVICE.published(hallmark_key_type=None)]})
    assert not report.valid and "no hallmark_key_type" in report.problems[0]


BODY = json.dumps({"type": "test", "timestamp": "2026-11-25T08:00:00.000Z", "environment": "live", "data": {}}).encode()
SECRET = "whsec_" + base64.b64encode(os.urandom(32)).decode()
NOW = 1_795_000_000


def headers_for(signer: Key, *, secret: str | None = SECRET, body: bytes = BODY) -> dict[str, str]:
    signed = f"msg_1.{NOW}.".encode() + body
    signatures = []
    if secret is not None:
        mac = hmac.new(base64.b64decode(secret.removeprefix("whsec_")), signed, hashlib.sha256).digest()
        signatures.append("v1," + base64.b64encode(mac).decode())
    signatures.append("v1a," + base64.b64encode(signer.private.sign(signed)).decode())
    return {
        "webhook-id": "msg_1",
        "webhook-timestamp": str(NOW),
        "webhook-signature": " ".join(signatures),
        "webhook-key-id": signer.kid,
    }


REGISTERED = Key("kid-registered")
TEST_KEY = Key("kid-test")
WEBHOOK_JWKS = {
    "keys": [
        SERVICE.published(),
        REGISTERED.published(hallmark_key_type="public"),
        TEST_KEY.published(hallmark_environment="test"),
    ]
}


def test_a_genuine_webhook_verifies_under_the_secret_and_the_signing_key() -> None:
    payload = verify_webhook(BODY, headers_for(SERVICE), secret=SECRET, jwks=WEBHOOK_JWKS, account_id="acc_brand", environment="live", now=NOW)
    assert payload["type"] == "test"


def test_a_key_set_without_the_account_is_refused() -> None:
    with pytest.raises(ValueError, match="account_id"):
        verify_webhook(BODY, headers_for(SERVICE, secret=None), jwks=WEBHOOK_JWKS, now=NOW)


@pytest.mark.parametrize("forger", [REGISTERED, TEST_KEY], ids=["registered public key", "other environment"])
def test_a_v1a_forged_with_a_key_the_service_does_not_sign_with_is_refused(forger: Key) -> None:
    headers = headers_for(forger, secret=None)
    with pytest.raises(WebhookVerificationError, match="no signing key"):
        verify_webhook(BODY, headers, jwks=WEBHOOK_JWKS, account_id="acc_brand", environment="live", now=NOW)
    with pytest.raises(WebhookVerificationError):
        verify_webhook(BODY, headers, secret=SECRET, jwks=WEBHOOK_JWKS, account_id="acc_brand", environment="live", now=NOW)


def test_a_test_message_signed_by_the_test_key_is_refused_where_live_ones_are_expected() -> None:
    # A leaked test `*` key can aim a test endpoint at the live receiver: its messages are genuinely
    # signed by the account's test signing key, and say so.
    test_body = BODY.replace(b'"environment": "live"', b'"environment": "test"')
    assert test_body != BODY
    headers = headers_for(TEST_KEY, secret=None, body=test_body)
    with pytest.raises(WebhookVerificationError, match="not of environment live"):
        verify_webhook(test_body, headers, jwks=WEBHOOK_JWKS, account_id="acc_brand", environment="live", now=NOW)
    assert verify_webhook(test_body, headers, jwks=WEBHOOK_JWKS, account_id="acc_brand", environment="test", now=NOW)["environment"] == "test"
    with pytest.raises(ValueError, match="environment"):
        verify_webhook(BODY, headers_for(SERVICE, secret=None), jwks=WEBHOOK_JWKS, account_id="acc_brand", now=NOW)
