"""What calls answer: the JSON object with the answer's metadata beside it, and paged lists."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ._errors import InvalidResponseError


class ApiResult(dict[str, Any]):
    """The answer's JSON object (a dict), with its HTTP status, headers and request id as attributes."""

    def __init__(self, data: dict[str, Any], *, status: int, headers: dict[str, str], attempts: int = 1) -> None:
        super().__init__(data)
        self.status = status
        self.headers = headers
        self.attempts = attempts

    @property
    def request_id(self) -> str | None:
        return self.headers.get("x-request-id")

    @property
    def replayed(self) -> bool:
        """True when the API answered a retried Idempotency-Key with the first attempt's stored answer."""
        return self.headers.get("idempotent-replayed") == "true"


class Page(ApiResult):
    """One page of a cursor-paged list; `data` is its list member (`keys`, `scans`, ...)."""

    data_key: str = "items"

    @property
    def data(self) -> list[dict[str, Any]]:
        items = self.get(self.data_key)
        return list(items) if isinstance(items, list) else []

    @property
    def next_cursor(self) -> str | None:
        pagination = self.get("pagination")
        if isinstance(pagination, dict) and pagination.get("hasMore") and isinstance(pagination.get("nextCursor"), str):
            cursor: str = pagination["nextCursor"]
            return cursor
        return None

    @property
    def has_more(self) -> bool:
        return self.next_cursor is not None


class Pager:
    """Iterates over every item of a paged list, asking for the next page only when it is needed.

    `for key in hallmark.keys.list(): ...` walks all pages; `.pages()` yields the pages themselves;
    `.first_page()` asks for one.
    """

    def __init__(self, fetch: Callable[[str | None], Page], cursor: str | None = None) -> None:
        self._fetch = fetch
        self._cursor = cursor

    def first_page(self) -> Page:
        return self._fetch(self._cursor)

    def pages(self) -> Iterator[Page]:
        """Every page, the first included, until one says there is no next.

        A page may be empty and still lead on (the server may skip rows); one whose next cursor was sent
        before (the page's own, or one of a cycle A -> B -> A) would lead round the same pages for ever,
        and raises InvalidResponseError.
        """
        cursor = self._cursor
        sent = {cursor} if cursor is not None else set()
        while True:
            page = self._fetch(cursor)
            yield page
            next_cursor = page.next_cursor
            if next_cursor is None:
                return
            if next_cursor in sent:
                raise _repeated_cursor(next_cursor, page)
            sent.add(next_cursor)
            cursor = next_cursor

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for page in self.pages():
            yield from page.data


def _repeated_cursor(cursor: str, page: Page) -> InvalidResponseError:
    return InvalidResponseError(
        f"The next cursor {cursor!r} was sent before: following it would fetch the same pages for ever.",
        status=page.status,
        headers=page.headers,
    )
