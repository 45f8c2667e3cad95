"""When a failed attempt is tried again, and after how long."""

from __future__ import annotations

import random

from ._errors import parse_retry_after
from ._transport import RawResponse

INITIAL_DELAY = 0.5
MAX_DELAY = 8.0


def backoff(attempt: int) -> float:
    """Exponential backoff with jitter: 0.5 s, 1 s, 2 s, ... up to 8 s, each less up to a quarter at random."""
    delay: float = min(INITIAL_DELAY * (2**attempt), MAX_DELAY)
    return delay * (1 - 0.25 * random.random())


def is_retryable(response: RawResponse, *, idempotency_key: str | None) -> bool:
    """408, 429 and 5xx; a 409 only when it says the same Idempotency-Key's first attempt still runs."""
    status = response.status
    if status in (408, 429) or status >= 500:
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
