"""Iterating over a paged list walks every page, once each, in order, asking for each page only when it is reached."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from itertools import islice

from urllib.parse import parse_qs, urlsplit

import pytest
from conftest import Brand
from faulty_proxy import FaultyProxy
from scripted_server import Received, ScriptedServer, json_answer

from hallmark import Hallmark, InvalidResponseError

#: API keys of the paged account beside its first key (test/e2e/python-client.test.ts seeds as many).
KEYS = 2_500
PAGE = 40


def paged_account_key(operator: Hallmark, base_url: str) -> str:
    """The key of an account holding KEYS API keys named "bulk 1" .. "bulk 2500" beside its first.

    test/e2e/python-client.test.ts writes them to the product's database, as test/e2e/sdk.test.ts
    does, and names the account's key in HALLMARK_TEST_PAGED_KEY. Run by hand against a product
    without it, the keys are made here over HTTP (slower: some 40 seconds on two cores), each revoked
    once made: an account holds at most 100 active API keys.
    """
    seeded = os.environ.get("HALLMARK_TEST_PAGED_KEY")
    if seeded:
        return seeded
    brand = Brand(operator, base_url)
    client = brand.client

    def made_and_revoked(i: int) -> None:
        client.keys.revoke(client.keys.create(name=f"bulk {i}", scopes=["assets:read"])["id"])

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(made_and_revoked, range(1, KEYS + 1)))
    return brand.key


def test_a_list_of_2500_keys_is_iterated_completely(operator: Hallmark, base_url: str, proxy: FaultyProxy) -> None:
    client = Hallmark(paged_account_key(operator, base_url), base_url=proxy.url)

    seen = [key["id"] for key in client.keys.list(type="api", limit=PAGE)]
    expected_pages = -(-(KEYS + 1) // PAGE)
    assert len(proxy.seen) == expected_pages, "one request a page, each page once"
    cursors = [request.path for request in proxy.seen]
    assert len(set(cursors)) == len(cursors) and "cursor=" not in cursors[0]
    assert len(seen) == len(set(seen)) == KEYS + 1, "every key once: the account's first key and the 2,500"

    pages = list(client.keys.list(type="api", limit=PAGE).pages())
    assert len(pages) == expected_pages
    assert all(len(page.data) == PAGE and page.has_more for page in pages[:-1]) and not pages[-1].has_more
    keys = [key for page in pages for key in page.data]
    assert [key["id"] for key in keys] == seen, "the item iterator yields the pages' items, in order"
    assert {key["name"] for key in keys} >= {f"bulk {i}" for i in range(1, KEYS + 1)}
    created = [key["createdAt"] for key in keys]
    assert created == sorted(created, reverse=True), "newest first across page boundaries"


def test_a_pager_asks_for_nothing_until_iterated_and_no_page_beyond_what_is_read(
    brand: Brand, proxy: FaultyProxy
) -> None:
    client = Hallmark(brand.key, base_url=proxy.url)
    for i in range(4):
        brand.client.keys.create(name=f"few {i}", scopes=["assets:read"])
    pager = client.keys.list(type="api", limit=1)
    assert proxy.seen == []
    first = pager.first_page()
    assert first.status == 200 and len(first.data) == 1 and first["accountId"] == brand.account_id
    assert len(proxy.seen) == 1
    assert len(list(islice(pager, 3))) == 3
    assert len(proxy.seen) == 1 + 3, "three items of one a page: three pages asked for, not the rest"
    assert sum(1 for _ in client.scans.list(gtin="00000000000000")) == 0
    assert len(proxy.seen) == 5, "an empty list is one request"


def _cursor_of(request: Received) -> str | None:
    cursors = parse_qs(urlsplit(request.path).query).get("cursor")
    return cursors[0] if cursors else None


def test_a_next_cursor_that_is_the_cursor_just_sent_raises_instead_of_asking_for_ever(scripted: ScriptedServer) -> None:
    # Answers the same cursor again; after 10 requests it ends the list, so a loop that does not stop ends too.
    def same_cursor_again(request: Received, index: int) -> tuple[int, dict[str, str], bytes]:
        cursor = _cursor_of(request)
        following = None if index >= 10 else "c1" if cursor is None else cursor
        pagination = {"limit": 1, "nextCursor": following, "hasMore": following is not None}
        return json_answer(200, {"keys": [{"id": f"k{index}"}], "pagination": pagination})

    scripted.script = same_cursor_again
    ids: list[str] = []
    with pytest.raises(InvalidResponseError) as raised:
        for key in Hallmark("svc_test_key", base_url=scripted.url).keys.list(limit=1):
            ids.append(key["id"])
    assert (raised.value.code, raised.value.status, raised.value.request_id) == ("INVALID_RESPONSE", 200, "req-1")
    assert ids == ["k0", "k1"] and len(scripted.received) == 2


def test_a_cycle_of_cursors_raises_instead_of_going_round_for_ever(scripted: ScriptedServer) -> None:
    # A -> B -> A: each cursor new to the page before it, none new to the list; ends after 10 requests.
    def cycle(request: Received, index: int) -> tuple[int, dict[str, str], bytes]:
        following = None if index >= 10 else "B" if _cursor_of(request) == "A" else "A"
        pagination = {"limit": 1, "nextCursor": following, "hasMore": following is not None}
        return json_answer(200, {"keys": [{"id": f"k{index}"}], "pagination": pagination})

    scripted.script = cycle
    with pytest.raises(InvalidResponseError):
        for _key in Hallmark("svc_test_key", base_url=scripted.url).keys.list(limit=1):
            pass
    assert [_cursor_of(request) for request in scripted.received] == [None, "A", "B"]


def test_an_empty_page_with_a_new_cursor_leads_on(scripted: ScriptedServer) -> None:
    # The server may skip rows: an empty page that says there is more is followed.
    def skipping(request: Received, _index: int) -> tuple[int, dict[str, str], bytes]:
        if _cursor_of(request) is None:
            return json_answer(200, {"keys": [], "pagination": {"limit": 1, "nextCursor": "c1", "hasMore": True}})
        return json_answer(200, {"keys": [{"id": "k1"}], "pagination": {"limit": 1, "nextCursor": None, "hasMore": False}})

    scripted.script = skipping
    assert [key["id"] for key in Hallmark("svc_test_key", base_url=scripted.url).keys.list(limit=1)] == ["k1"]
