"""Published keys (/.well-known/jwks.json): RFC 8037 OKP JWKs with Hallmark's members saying whose they are."""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

PublishedKey = Mapping[str, Any]


def keys_of(jwks: Mapping[str, Any]) -> list[PublishedKey]:
    # A key set that is not a JSON object (null, a list) holds no key: an AttributeError before.
    keys = jwks.get("keys") if isinstance(jwks, Mapping) else None
    return [key for key in keys if isinstance(key, Mapping)] if isinstance(keys, list) else []


def b64url_decode(text: str) -> bytes | None:
    """base64url without padding, canonical only (a re-encoding gives the same text), else None."""
    try:
        data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (ValueError, TypeError):
        return None
    return data if base64.urlsafe_b64encode(data).rstrip(b"=").decode() == text else None


def is_ed25519(key: PublishedKey) -> bool:
    return (
        key.get("kty") == "OKP"
        and key.get("crv") == "Ed25519"
        and isinstance(key.get("x"), str)
        and isinstance(key.get("kid"), str)
    )


def public_key_bytes(key: PublishedKey) -> bytes | None:
    x = key.get("x")
    raw = b64url_decode(x) if isinstance(x, str) else None
    return raw if raw is not None and len(raw) == 32 else None


def verify_ed25519(public_key: bytes, message: bytes, signature: bytes) -> bool:
    if len(public_key) != 32 or len(signature) != 64:
        return False
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
    except InvalidSignature:
        return False
    return True


def key_owns_gtin(key: PublishedKey, gtin: str) -> bool:
    """True when the key's account may sign codes of this GTIN by one of its claims."""
    # Lists of strings only, as the service writes them: a string there was searched as text (a GTIN
    # inside it matched) and its characters taken as one-digit prefixes.
    gtins = _strings_of(key.get("hallmark_gtins"))
    prefixes = _strings_of(key.get("hallmark_gtin_prefixes"))
    return gtin in gtins or any(gtin[1:].startswith(prefix) for prefix in prefixes)


def _strings_of(value: Any) -> list[str]:
    return [each for each in value if isinstance(each, str)] if isinstance(value, list) else []


def keyless_owner_of(owners_without_keys: Sequence[Mapping[str, Any]], gtin: str) -> str | None:
    """The account that owns the GTIN though it has no key in the set (the set's ``hallmark_owners_without_keys``)."""
    owner = next((owner for owner in owners_without_keys if key_owns_gtin(owner, gtin)), None)
    return None if owner is None else str(owner.get("hallmark_account"))


def keys_bound_to_gtin(
    keys: Sequence[PublishedKey], gtin: str, owners_without_keys: Sequence[Mapping[str, Any]] = ()
) -> tuple[list[PublishedKey], str]:
    """The keys of the GTIN's owning account (none when it owns it without a key); when no account owns it,
    the operator's. (keys, "account"|"operator"). The keys and owners are one environment's."""
    candidates = [key for key in keys if is_ed25519(key)]
    owning = [key for key in candidates if key_owns_gtin(key, gtin)]
    if owning:
        return owning, "account"
    if keyless_owner_of(owners_without_keys, gtin) is not None:
        return [], "account"
    return [key for key in candidates if key.get("hallmark_signs_unowned") is True], "operator"
