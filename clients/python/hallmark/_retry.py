"""When a failed attempt is tried again, and after how long.

A request that is safe to repeat (GET, HEAD, PUT, DELETE, OPTIONS; a POST carrying an
Idempotency-Key its operation honours; ``POST /code/verify``, whose repeat only records one more
scan) is retried on no answer, 408, 429, 5xx, and a 409 that says the same key's first attempt still
runs. Any other request (``blocklist.create_from_csv``, a webhook replay, a PATCH) is retried only when
the API certainly did not act on it: a connection that was never made, and a 429 (the rate limits
refuse before anything is done). Not on a 5xx or a lost answer, which may come after the work was
done: a 503 with Retry-After is a busy refusal made before any work, but also a store lost half-way
through (the services answer an outage 503 with Retry-After: 1), which the client cannot tell apart.
"""

from __future__ import annotations

import random

from ._errors import parse_retry_after
from ._transport import RawResponse

INITIAL_DELAY = 0.5
MAX_DELAY = 8.0

#: Methods whose request, repeated, has the effect of one (RFC 9110, 9.2.2).
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})
#: Requests retried as if safe to repeat though they take no Idempotency-Key: a verify sent twice
#: records one more scan and answers the same verdict (docs/SDK.md, Retries and idempotency).
RETRIED_WITHOUT_KEY = frozenset({("POST", "/api/v1/code/verify")})


def backoff(attempt: int) -> float:
    """Exponential backoff with jitter: 0.5 s, 1 s, 2 s, ... up to 8 s, each less up to a quarter at random."""
    delay: float = min(INITIAL_DELAY * (2**attempt), MAX_DELAY)
    return delay * (1 - 0.25 * random.random())


def is_safe_to_repeat(method: str, path: str, *, sends_honoured_key: bool) -> bool:
    """True when sending the request again cannot do twice what it asks (`path` without its query)."""
    return method in IDEMPOTENT_METHODS or sends_honoured_key or (method, path) in RETRIED_WITHOUT_KEY


def is_retryable(response: RawResponse, *, idempotency_key: str | None, safe_to_repeat: bool) -> bool:
    """429 always; when safe to repeat, 408 and 5xx too, and a 409 saying the same Idempotency-Key's first attempt still runs."""
    status = response.status
    if status == 429:
        # Refused by the rate limits before anything was done.
        return True
    if not safe_to_repeat:
        return False
    if status == 408 or status >= 500:
        return True
    if status == 409 and idempotency_key is not None and "retry-after" in response.headers:
        return True
    return False


def retry_delay(response: RawResponse | None, attempt: int, *, max_retry_after: float) -> float | None:
    """Seconds to wait before the next attempt, or None when the API asked for longer than max_retry_after."""
    if response is not None:
        asked = parse_retry_after(response.headers.get("retry-after"))
        if asked is not None:
            return asked if asked <= max_retry_after else None
    return backoff(attempt)
