"""Iterating over a paged list walks every page, once each, in order."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from conftest import Brand

from hallmark import Hallmark

KEYS = 1_000
PAGE = 40


def test_a_list_of_a_thousand_keys_is_iterated_completely(operator: Hallmark, base_url: str) -> None:
    lister = Brand(operator, base_url)
    client = lister.client
    with ThreadPoolExecutor(8) as pool:
        made = set(pool.map(lambda i: client.keys.create(name=f"page-{i}", scopes=["assets:read"])["id"], range(KEYS)))
    assert len(made) == KEYS

    pages = list(client.keys.list(type="api", limit=PAGE).pages())
    seen = [key["id"] for key in client.keys.list(type="api", limit=PAGE)]

    assert len(pages) == -(-(KEYS + 1) // PAGE), "the account's first key too, 40 to a page"
    assert all(len(page.data) == PAGE for page in pages[:-1]) and not pages[-1].has_more
    assert len(seen) == len(set(seen)) == KEYS + 1
    assert made <= set(seen)
    created = [key["createdAt"] for key in client.keys.list(type="api", limit=100)]
    assert created == sorted(created, reverse=True), "newest first across page boundaries"


def test_a_pager_starts_nothing_until_iterated_and_stops_at_the_last_page(client: Hallmark) -> None:
    pager = client.keys.list(limit=1)
    first = pager.first_page()
    assert first.status == 200 and len(first.data) == 1 and first["accountId"]
    assert sum(1 for _ in client.scans.list(gtin="00000000000000")) == 0
