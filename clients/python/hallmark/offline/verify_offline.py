"""Checks a Hallmark code with no server: the same checks as verifyOffline in packages/client (docs/SIGNING.md)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Literal

from .digital_link import LinkError, parse_digital_link
from .keys import (
    PublishedKey,
    b64url_decode,
    is_ed25519,
    keys_bound_to_gtin,
    keys_of,
    keyless_owner_of,
    public_key_bytes,
    verify_ed25519,
)


@dataclass(frozen=True)
class OfflineVerification:
    valid: bool
    #: Why it is not valid (None when valid).
    reason: str | None = None
    kid: str | None = None
    #: The account whose key signed: the GTIN's owner, or the operator for a GTIN nobody owns.
    account: str | None = None
    environment: str | None = None
    gtin: str | None = None
    serial: str | None = None
    batch: str | None = None
    expiry: str | None = None


def signed_message(*, kid: str, gtin: str, serial: str, batch: str | None, variant: str | None, expiry: str | None) -> bytes:
    """The bytes a code's signature covers: seven lines, each ending in a line feed (docs/SIGNING.md)."""
    lines = [
        "hallmark/code-signature/v1",
        f"kid={kid}",
        f"gtin={gtin}",
        f"serial={serial}",
        f"batch={batch or ''}",
        f"variant={variant or ''}",
        f"expiry={expiry or ''}",
    ]
    return ("\n".join(lines) + "\n").encode("utf-8")


def year_of_yy(yy: int, now: datetime) -> int:
    """GS1's rule for a two-digit year: the one within 49 years behind and 50 ahead of `now`'s."""
    current = now.year
    century = current - current % 100
    ahead = yy - current % 100
    if ahead >= 51:
        return century - 100 + yy
    if ahead <= -50:
        return century + 100 + yy
    return century + yy


def end_of_yymmdd(yymmdd: str, now: datetime) -> datetime:
    """When a code with this expiry date (AI 17) stops verifying: the end of that day in UTC (day 00: the month's end)."""
    year = year_of_yy(int(yymmdd[0:2]), now)
    month, day = int(yymmdd[2:4]), int(yymmdd[4:6])
    if day == 0:
        return datetime(year + month // 12, month % 12 + 1, 1, tzinfo=timezone.utc)
    return datetime(year, month, day, tzinfo=timezone.utc) + timedelta(days=1)


def verify_offline(
    link: str,
    jwks: Mapping[str, Any],
    *,
    environment: Literal["live", "test"] = "live",
    now: datetime | None = None,
) -> OfflineVerification:
    """Verifies a code's signature under the keys bound to its GTIN's owner in a saved key set.

    Fails closed: a key set that does not say whose keys are whose, or a signature by a key of an
    account that does not own the GTIN, is not valid. Only keys of `environment` count. A code whose
    expiry date (AI 17, read as online reads it) has passed by `now` (an aware datetime; the present
    unless given) is not valid either, though genuine: online it is SUSPICIOUS with EXPIRED_CODE.
    Says nothing of scan history, reports or blocks, nor of a test code's 24 hours (not in the link):
    those need the service (``hallmark.codes.verify``).
    """
    try:
        parsed = parse_digital_link(link)
    except LinkError as error:
        return OfflineVerification(valid=False, reason=error.message)
    if parsed.serial is None:
        return OfflineVerification(valid=False, reason="The link has no serial number (/21/).")
    serial = parsed.serial
    candidates = [
        key for key in keys_of(jwks) if is_ed25519(key) and key.get("hallmark_environment", environment) == environment
    ]
    if not candidates:
        return OfflineVerification(valid=False, reason=f"The key set holds no Ed25519 key of the {environment} environment.")
    if any(not isinstance(key.get("hallmark_account"), str) for key in candidates):
        return OfflineVerification(
            valid=False,
            reason="The key set does not say whose keys are whose (no hallmark_account); "
            "fetch a current one from /.well-known/jwks.json.",
        )
    signature = b64url_decode(parsed.signature or "")

    def signed_by(key: PublishedKey) -> bool:
        public_key = public_key_bytes(key)
        if public_key is None or signature is None:
            return False
        message = signed_message(
            kid=str(key["kid"]),
            gtin=parsed.gtin,
            serial=serial,
            batch=parsed.batch,
            variant=parsed.variant,
            expiry=parsed.expiry,
        )
        return verify_ed25519(public_key, message, signature)

    listed = jwks.get("hallmark_owners_without_keys")
    owners = [
        entry
        for entry in (listed if isinstance(listed, list) else [])
        if isinstance(entry, Mapping) and entry.get("hallmark_environment") == environment
    ]
    bound, owner = keys_bound_to_gtin(candidates, parsed.gtin, owners)
    keyless_owner = keyless_owner_of(owners, parsed.gtin) if owner == "account" and not bound else None
    signer = next((key for key in bound if signed_by(key)), None)
    if signer is not None:
        moment = now or datetime.now(timezone.utc)
        if parsed.expiry is not None and end_of_yymmdd(parsed.expiry, moment) <= moment:
            last_day = (end_of_yymmdd(parsed.expiry, moment) - timedelta(days=1)).date().isoformat()
            return OfflineVerification(
                valid=False,
                reason=f"The code expired on {last_day} (its expiry date, AI 17); its signature is genuine "
                f"(key {signer['kid']} of account {signer['hallmark_account']}), so online it is SUSPICIOUS with EXPIRED_CODE.",
            )
        return OfflineVerification(
            valid=True,
            kid=str(signer["kid"]),
            account=str(signer["hallmark_account"]),
            environment=signer.get("hallmark_environment"),
            gtin=parsed.gtin,
            serial=serial,
            batch=parsed.batch,
            expiry=parsed.expiry,
        )
    stranger = next((key for key in candidates if not any(key is b for b in bound) and signed_by(key)), None)
    if stranger is not None:
        owning_account = bound[0].get("hallmark_account") if bound else keyless_owner
        owned = f" (it is owned by account {owning_account})" if owner == "account" else ""
        return OfflineVerification(
            valid=False,
            reason=f"The signature is by key {stranger['kid']} of account {stranger['hallmark_account']}, "
            f"which may not sign GTIN {parsed.gtin}{owned}.",
        )
    if keyless_owner is not None:
        return OfflineVerification(
            valid=False,
            reason=f"GTIN {parsed.gtin} is owned by account {keyless_owner}, which has no {environment} key in the set: "
            "no code of it is genuine.",
        )
    if not bound:
        return OfflineVerification(valid=False, reason=f"No key of the set may sign GTIN {parsed.gtin}.")
    whose = "owner" if owner == "account" else "operator"
    return OfflineVerification(
        valid=False,
        reason=f"The signature does not verify under any of the {len(bound)} keys bound to GTIN {parsed.gtin}'s {whose}.",
    )
