"""Checks a webhook message's Standard Webhooks signatures (docs/WEBHOOKS.md, Verifying a message).

`v1` is HMAC-SHA256 under the endpoint's secret (whsec_...); `v1a` is Ed25519 under the account's
signing key of the message's environment, which /.well-known/jwks.json publishes (the
`webhook-key-id` header names it). Both sign `<webhook-id>.<webhook-timestamp>.<body>`, the body
exactly as received.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ._errors import HallmarkError
from .offline.audit_export import RETIREMENT_GRACE_SECONDS
from .offline.checkpoint import instant_seconds, valid_time
from .offline.keys import is_ed25519, keys_of, public_key_bytes, verify_ed25519

DEFAULT_TOLERANCE = 300.0

# Entries of a webhook-signature header looked at: the API sends at most three (two v1 during a
# secret's rotation, one v1a). Each costs a signature check, so a forged header of 15,000 entries
# held a receiver for seconds.
MAX_SIGNATURE_ENTRIES = 8


class WebhookVerificationError(HallmarkError):
    """The message's signature, timestamp or headers do not check out."""


def _header(headers: Mapping[str, str], name: str) -> str:
    for key, value in headers.items():
        if key.lower() == name:
            return value
    raise WebhookVerificationError(f"The {name} header is missing.")


def _secret_bytes(secret: str) -> bytes:
    """The HMAC key a whsec_ secret holds. An empty one is refused: anyone can sign under an empty key."""
    try:
        key = base64.b64decode(secret.removeprefix("whsec_"), validate=True)
    except binascii.Error as error:
        raise ValueError("The webhook secret is not whsec_ followed by base64.") from error
    if not key:
        raise ValueError("The webhook secret is empty: give the endpoint's whsec_ secret (an unset variable reads as '').")
    return key


def _checked_tolerance(tolerance: float) -> float:
    """The tolerance asked for: NaN would accept any age, a negative one nothing."""
    if not tolerance >= 0:
        raise ValueError(f"tolerance must be a number of seconds, 0 or more (got {tolerance!r}).")
    return tolerance


def _signatures(header: str, version: str) -> list[bytes]:
    found: list[bytes] = []
    # Entries are separated by whitespace; where two header lines were joined with ", " a comma
    # ends an entry too, and base64 holds no comma, so a trailing one is the join's.
    entries = [entry.rstrip(",") for entry in header.split()]
    for entry in [each for each in entries if each][:MAX_SIGNATURE_ENTRIES]:
        name, _, value = entry.partition(",")
        if name == version:
            try:
                found.append(base64.b64decode(value, validate=True))
            except ValueError:
                # binascii.Error, and the ValueError of text that is not ASCII (header bytes a server
                # hands over as latin-1): a bad signature, not a misconfiguration.
                continue
    return found


def _signed_before_retirement(key: Mapping[str, Any], sent_at: int) -> bool:
    """Not a signing key rotated out (`hallmark_retired_at`) more than a minute before `sent_at`."""
    if "hallmark_retired_at" not in key:
        return True
    retired = key.get("hallmark_retired_at")
    if not isinstance(retired, str) or not valid_time(retired):
        return False
    return sent_at <= instant_seconds(retired) + RETIREMENT_GRACE_SECONDS


def verify_webhook(
    body: bytes | str,
    headers: Mapping[str, str],
    *,
    secret: str | Sequence[str] | None = None,
    jwks: Mapping[str, Any] | None = None,
    account_id: str | None = None,
    environment: str | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
    now: float | None = None,
) -> dict[str, Any]:
    """Verifies a delivery and answers its parsed payload (`type`, `timestamp`, `environment`, `data`).

    Give `secret` to check a `v1` signature (or a list of secrets while one is rotated: a signature
    under any of them will do), `jwks` (the published key set) with `account_id` (your account) to
    check the `v1a` one with `environment` (the one your endpoint is registered in), or both (then
    both must verify). The v1a key must be what the service signs with: a signing key
    (`hallmark_key_type`) of `account_id` in `environment`, which must also be the message's, not a
    key an account registered (its private half is outside the service) nor one of the other environment.
    Raises WebhookVerificationError; a timestamp further than `tolerance` seconds from now is refused.
    Raises ValueError when neither `secret` nor `jwks` is given, or `jwks` without `account_id` and
    `environment`, for a secret that is empty or not base64, and for a `tolerance` that is not 0 or more.
    """
    secrets = [] if secret is None else [secret] if isinstance(secret, str) else list(secret)
    if not secrets and jwks is None:
        raise ValueError("Give the endpoint's secret, the key set, or both.")
    if jwks is not None and account_id is None:
        # Without it any tenant's key would do: every account's keys are in the one published set.
        raise ValueError("Give account_id with jwks: your account id, whose signing key must have signed the v1a signature.")
    if jwks is not None and environment not in ("live", "test"):
        # Else a test endpoint aimed at a live receiver would deliver test messages its test key signed.
        raise ValueError('Give environment with jwks: "live" or "test", the environment your endpoint is registered in.')
    secret_keys = [_secret_bytes(each) for each in secrets]
    tolerance = _checked_tolerance(tolerance)
    raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    message_id = _header(headers, "webhook-id")
    timestamp = _header(headers, "webhook-timestamp")
    signature_header = _header(headers, "webhook-signature")
    # Digits only, a safe integer, as the TypeScript helper reads it (int() also takes " 12", "+12"
    # and "1_2", and raises ValueError past 4,300 digits).
    if not (timestamp.isascii() and timestamp.isdigit() and len(timestamp) <= 16) or int(timestamp) > 2**53 - 1:
        raise WebhookVerificationError("The webhook-timestamp header is not Unix seconds.")
    sent_at = int(timestamp)
    if abs((time.time() if now is None else now) - sent_at) > tolerance:
        raise WebhookVerificationError("The message's timestamp is too far from now.")
    signed = f"{message_id}.{timestamp}.".encode() + raw

    if secrets:
        candidates = _signatures(signature_header, "v1")
        expected = [hmac.new(key, signed, hashlib.sha256).digest() for key in secret_keys]
        if not any(hmac.compare_digest(mine, theirs) for mine in expected for theirs in candidates):
            raise WebhookVerificationError("No v1 signature matches the secret.")
    try:
        payload = json.loads(raw)
    except (ValueError, RecursionError) as error:
        # RecursionError: nested deeper than the parser goes (a forged body, checked by key set alone).
        raise WebhookVerificationError("The body is not JSON.") from error
    if not isinstance(payload, dict):
        raise WebhookVerificationError("The body is not a JSON object.")
    if jwks is not None:
        kid = _header(headers, "webhook-key-id")
        # compliance-service writes its endpoint's environment into every payload and signs with that
        # environment's key: both must be the environment expected.
        if payload.get("environment") != environment:
            raise WebhookVerificationError(f"The message is not of environment {environment}.")
        key = next(
            (
                k
                for k in keys_of(jwks)
                if is_ed25519(k)
                and k.get("kid") == kid
                and k.get("hallmark_account") == account_id
                and k.get("hallmark_key_type") == "signing"
                and k.get("hallmark_environment") == environment
                and _signed_before_retirement(k, sent_at)
            ),
            None,
        )
        if key is None:
            raise WebhookVerificationError(
                f"The key set has no signing key {kid} of account {account_id} in the message's environment ({environment})"
                " that was not retired before the message's time."
            )
        public_key = public_key_bytes(key)
        if public_key is None or not any(
            verify_ed25519(public_key, signed, candidate) for candidate in _signatures(signature_header, "v1a")
        ):
            raise WebhookVerificationError(f"No v1a signature verifies under key {kid}.")
    return payload
