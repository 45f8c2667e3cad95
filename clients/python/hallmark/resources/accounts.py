from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from .._types import ApiResult, Pager
from ._base import Resource, body_of

if TYPE_CHECKING:
    from .._client import BaseClient

Environment = Literal["live", "test"]
ClaimStatus = Literal["active", "revoked"]


class AccountGtins(Resource):
    """The operator's grants of GTINs and company prefixes to an account."""

    def grant(
        self,
        account_id: str,
        *,
        gtin: str | None = None,
        prefix: str | None = None,
        environment: Environment | None = None,
        idempotency_key: str | None = None,
    ) -> ApiResult:
        """Grants an account a GTIN-14 or a GS1 Company Prefix (exactly one of the two)."""
        body = body_of(gtin=gtin, prefix=prefix, environment=environment)
        return self._client.call(
            "grantGtin", path_params={"accountId": account_id}, body=body, idempotency_key=idempotency_key
        )

    def list(self, account_id: str, *, status: ClaimStatus | None = None, limit: int | None = None) -> Pager:
        return self._client.paged(
            "listAccountGtins", path_params={"accountId": account_id}, query={"status": status, "limit": limit}
        )


class Accounts(Resource):
    """Accounts (the operator's, `accounts:write`) and the caller's own."""

    def __init__(self, client: BaseClient) -> None:
        super().__init__(client)
        self.gtins = AccountGtins(client)

    def me(self) -> ApiResult:
        """The calling key's account and the key itself (never its secret)."""
        return self._client.call("getMyAccount")

    def create(
        self,
        *,
        name: str,
        tier: Literal["free", "starter", "enterprise"],
        environment: Environment | None = None,
        idempotency_key: str | None = None,
    ) -> ApiResult:
        """A new account and its first key (`apiKey.secret`, shown once)."""
        body = body_of(name=name, tier=tier, environment=environment)
        return self._client.call("createAccount", body=body, idempotency_key=idempotency_key)

    def list(self, *, limit: int | None = None) -> Pager:
        return self._client.paged("listAccounts", query={"limit": limit})


class Gtins(Resource):
    """The caller's own GTIN claims."""

    def list(self, *, status: ClaimStatus | None = None, limit: int | None = None) -> Pager:
        return self._client.paged("listGtins", query={"status": status, "limit": limit})

    def claim(
        self,
        *,
        gtin: str | None = None,
        prefix: str | None = None,
        environment: Environment | None = None,
        idempotency_key: str | None = None,
    ) -> ApiResult:
        """A self-service claim for the test environment (where the operator allows it)."""
        body = body_of(gtin=gtin, prefix=prefix, environment=environment)
        return self._client.call("claimGtin", body=body, idempotency_key=idempotency_key)

    def revoke(self, claim_id: str) -> ApiResult:
        return self._client.call("revokeGtinClaim", path_params={"claimId": claim_id})
