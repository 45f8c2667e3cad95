"""`Hallmark`: the client with the API's operations grouped by area."""

from __future__ import annotations

from collections.abc import Mapping

from ._client import DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_MAX_RETRIES, DEFAULT_MAX_RETRY_AFTER, DEFAULT_TIMEOUT, BaseClient
from .resources import (
    Account,
    Accounts,
    Auction,
    Blocklist,
    Codes,
    Compliance,
    Gtins,
    Keys,
    Links,
    Scans,
    Schemas,
    System,
    Usage,
    Webhooks,
)


class _Unchanged:
    """with_options' default for an option whose None means something (max_response_bytes: no bound)."""


_UNCHANGED = _Unchanged()


class Hallmark(BaseClient):
    """A synchronous client of the Hallmark API.

    ``Hallmark(api_key="svc_live_...", base_url="https://hallmark.example")``; both default to the
    environment (HALLMARK_API_KEY, HALLMARK_BASE_URL). Failed attempts (no connection, a timeout,
    408, 429, 5xx) are retried ``max_retries`` times with exponential backoff and jitter, waiting
    what Retry-After asks; creating calls carry one Idempotency-Key across their retries. Errors are
    raised as the class of their code (``hallmark.NotFoundError``, ...). Safe to share between
    threads: each thread keeps its own connection.
    """

    def __init__(
        self,
        api_key: str | None = None,
        *,
        base_url: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        max_retry_after: float = DEFAULT_MAX_RETRY_AFTER,
        default_headers: Mapping[str, str] | None = None,
        max_response_bytes: int | None = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        super().__init__(
            api_key,
            base_url=base_url,
            timeout=timeout,
            max_retries=max_retries,
            max_retry_after=max_retry_after,
            default_headers=default_headers,
            max_response_bytes=max_response_bytes,
        )
        self.accounts = Accounts(self)
        self.gtins = Gtins(self)
        self.keys = Keys(self)
        self.codes = Codes(self)
        self.scans = Scans(self)
        self.blocklist = Blocklist(self)
        self.compliance = Compliance(self)
        self.auction = Auction(self)
        self.webhooks = Webhooks(self)
        self.schemas = Schemas(self)
        self.links = Links(self)
        self.account = Account(self)
        self.usage = Usage(self)
        self.system = System(self)

    def with_options(
        self,
        *,
        api_key: str | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        max_retry_after: float | None = None,
        max_response_bytes: int | None | _Unchanged = _UNCHANGED,
    ) -> Hallmark:
        """A client like this one with some options changed: ``hallmark.with_options(max_retries=5).codes...``.

        ``max_response_bytes=None`` reads answers of any size (a large CSV export).
        """
        return Hallmark(
            api_key if api_key is not None else self.api_key,
            base_url=self.base_url,
            timeout=timeout if timeout is not None else self.timeout,
            max_retries=max_retries if max_retries is not None else self.max_retries,
            max_retry_after=max_retry_after if max_retry_after is not None else self.max_retry_after,
            default_headers=self.default_headers,
            max_response_bytes=self.max_response_bytes if isinstance(max_response_bytes, _Unchanged) else max_response_bytes,
        )

    def __enter__(self) -> Hallmark:
        return self
