from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal

from .._types import ApiResult, Pager
from ._base import Resource, body_of

if TYPE_CHECKING:
    from .._client import BaseClient

Environment = Literal["live", "test"]


class SigningKeys(Resource):
    def rotate(self, *, idempotency_key: str | None = None) -> ApiResult:
        """A new signing key for the account (201); the old one retires and keeps verifying what it signed."""
        return self._client.call("rotateSigningKey", idempotency_key=idempotency_key)


class Keys(Resource):
    """API keys, registered public keys and signing keys (docs/API.md, Authentication and keys)."""

    def __init__(self, client: BaseClient) -> None:
        super().__init__(client)
        self.signing = SigningKeys(client)

    def create(
        self,
        *,
        name: str,
        scopes: Iterable[str],
        expires_in: str | None = None,
        environment: Environment | None = None,
        restricted_to_gtins: Iterable[str] | None = None,
        idempotency_key: str | None = None,
    ) -> ApiResult:
        """A new API key; its `secret` is in this answer only.

        `restricted_to_gtins` restricts it to those GTINs: it acts on their codes alone and is refused
        every other operation (403 KEY_RESTRICTED; docs/API.md, "Resource restrictions").
        """
        if isinstance(restricted_to_gtins, str):
            # A string is iterable: its characters would each be sent as a GTIN.
            raise TypeError("restricted_to_gtins takes a list of GTINs, not one string")
        restrictions = None if restricted_to_gtins is None else {"gtins": list(restricted_to_gtins)}
        body = body_of(
            name=name, scopes=list(scopes), expiresIn=expires_in, environment=environment, restrictions=restrictions
        )
        return self._client.call("createKey", body=body, idempotency_key=idempotency_key)

    def register_public_key(
        self,
        *,
        name: str,
        public_key: str,
        proof: str | None = None,
        environment: Environment | None = None,
        idempotency_key: str | None = None,
    ) -> ApiResult:
        """Registers an Ed25519 public key (base64url of its 32 bytes, or PEM) that signs codes made elsewhere.

        `proof` (optional) shows you hold the private key: its Ed25519 signature (base64url, 86
        characters) over the UTF-8 bytes of `hallmark-key-registration:<account id>:<environment>:<public
        key as base64url of its 32 raw bytes>`, for the account and environment it is registered in
        (docs/SIGNING.md). With it no other account may register the key; without it the key verifies
        your codes but reserves nothing.
        """
        body = body_of(name=name, publicKey=public_key, algorithm="Ed25519", proof=proof, environment=environment)
        return self._client.call("createKey", body=body, idempotency_key=idempotency_key)

    def list(self, *, type: Literal["api", "public", "signing"] | None = None, limit: int | None = None) -> Pager:
        return self._client.paged("listKeys", query={"type": type, "limit": limit})

    def rotate(
        self, key_id: str, *, grace_seconds: Literal[0, 900, 3600, 86400], idempotency_key: str | None = None
    ) -> ApiResult:
        """A new key like this one (201, its `secret` shown once); the old one works for `grace_seconds` more."""
        return self._client.call(
            "rotateApiKey",
            path_params={"id": key_id},
            body={"graceSeconds": grace_seconds},
            idempotency_key=idempotency_key,
        )

    def revoke(self, key_id: str) -> ApiResult:
        return self._client.call("revokeKey", path_params={"id": key_id})

    def jwks(self) -> ApiResult:
        """The published key set (/.well-known/jwks.json) that offline verification checks against."""
        return self._client.call("getJwks")
