"""Retries, the Idempotency-Key kept across them, Retry-After and timeouts, through a proxy that fails on purpose."""

from __future__ import annotations

import threading
import time

import pytest
from conftest import Brand
from faulty_proxy import FaultyProxy

from hallmark import (
    APIConnectionError,
    APITimeoutError,
    ConflictError,
    DuplicateSerialError,
    Hallmark,
    RateLimitedError,
    ServiceUnavailableError,
    ValidationError,
)


def through(proxy: FaultyProxy, brand: Brand, **options: float) -> Hallmark:
    return Hallmark(brand.key, base_url=proxy.url, **options)  # type: ignore[arg-type]


def test_a_post_that_gets_503_twice_then_succeeds_creates_exactly_one_code(proxy: FaultyProxy, brand: Brand) -> None:
    # The first attempt reaches the gateway and makes the code, but its answer is lost (503 on the way
    # back); the second is refused before the gateway; the third gets the first attempt's answer.
    proxy.script = ["forward-then-503", "503", "forward"]
    gtin, serial = brand.gtin(), brand.serial()
    code = through(proxy, brand).codes.generate(gtin=gtin, serial_number=serial)

    assert code.status == 201
    assert code.attempts == 3
    assert code.replayed, "the third attempt is answered from the first one's stored answer"
    keys = {seen.headers.get("idempotency-key") for seen in proxy.seen}
    assert len(proxy.seen) == 3 and len(keys) == 1 and None not in keys, "one Idempotency-Key on every attempt"
    assert len(proxy.forwarded()) == 2
    # Exactly one code: it verifies, and making it again is a duplicate.
    assert brand.client.codes.verify(url=code["url"])["verdict"] == "AUTHENTIC"
    with pytest.raises(DuplicateSerialError):
        brand.client.codes.generate(gtin=gtin, serial_number=serial)


def test_without_an_idempotency_key_the_same_failures_end_in_a_duplicate(proxy: FaultyProxy, brand: Brand) -> None:
    # The control: the same lost answer, retried without a key, runs again and meets the first code.
    proxy.script = ["forward-then-503", "503", "forward"]
    client = through(proxy, brand)
    body = {"gtin": brand.gtin(), "serialNumber": brand.serial()}
    with pytest.raises(DuplicateSerialError):
        client.request("POST", "/api/v1/code/generate", json_body=body)
    assert len(proxy.seen) == 3


def test_each_call_has_its_own_idempotency_key_and_a_given_one_is_kept(proxy: FaultyProxy, brand: Brand) -> None:
    client = through(proxy, brand)
    client.codes.generate(gtin=brand.gtin(), serial_number=brand.serial())
    client.codes.generate(gtin=brand.gtin(), serial_number=brand.serial(), idempotency_key="my-key-1")
    client.keys.list().first_page()
    first, second, listing = (seen.headers.get("idempotency-key") for seen in proxy.seen)
    assert first and len(first) == 36 and second == "my-key-1"
    assert listing is None, "no Idempotency-Key where the API does not take one"


def test_429_waits_for_retry_after(proxy: FaultyProxy, brand: Brand) -> None:
    proxy.script = ["429:2"]
    started = time.monotonic()
    page = through(proxy, brand).keys.list().first_page()
    assert page.status == 200 and page.attempts == 2
    waited = proxy.seen[1].at - proxy.seen[0].at
    assert 2.0 <= waited < 3.0, f"the retry came {waited:.2f} s after the 429, not after Retry-After: 2"
    assert time.monotonic() - started >= 2.0


def test_a_409_for_a_key_still_in_use_is_retried_only_with_an_idempotency_key(proxy: FaultyProxy, brand: Brand) -> None:
    proxy.script = ["409:1"]
    code = through(proxy, brand).codes.generate(gtin=brand.gtin(), serial_number=brand.serial())
    assert code.status == 201 and code.attempts == 2
    assert proxy.seen[0].headers["idempotency-key"] == proxy.seen[1].headers["idempotency-key"]
    assert proxy.seen[1].at - proxy.seen[0].at >= 1.0
    proxy.script = ["409:1"]
    with pytest.raises(ConflictError):
        through(proxy, brand).codes.verify(url="https://id.example/01/09506000134352/21/X?sig=" + "A" * 86)
    assert len(proxy.seen) == 3, "a 409 without an Idempotency-Key is an answer, not a retry"


def test_a_retry_after_beyond_max_retry_after_is_raised_at_once(proxy: FaultyProxy, brand: Brand) -> None:
    proxy.script = ["429:3600"]
    started = time.monotonic()
    with pytest.raises(RateLimitedError) as raised:
        through(proxy, brand).keys.list().first_page()
    assert time.monotonic() - started < 1.0
    assert raised.value.retry_after == 3600 and raised.value.status == 429
    assert len(proxy.seen) == 1


def test_the_real_rate_limit_is_waited_out(operator: Hallmark, base_url: str) -> None:
    # A free account allows 20 requests a second; 60 at once get 429 with Retry-After and are retried.
    free = Brand(operator, base_url, tier="free").client.with_options(max_retries=4)
    barrier = threading.Barrier(60)
    attempts: list[int] = []
    failures: list[BaseException] = []

    def one() -> None:
        barrier.wait()
        try:
            attempts.append(free.keys.list(limit=1).first_page().attempts)
        except BaseException as error:  # noqa: BLE001 - collected for the assertion
            failures.append(error)

    threads = [threading.Thread(target=one) for _ in range(60)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert len(attempts) == 60 and max(attempts) > 1, "some calls met the limit and were retried"


def test_5xx_is_retried_with_backoff_and_raised_when_retries_run_out(proxy: FaultyProxy, brand: Brand) -> None:
    proxy.script = ["503", "503", "503"]
    with pytest.raises(ServiceUnavailableError) as raised:
        through(proxy, brand, max_retries=2).keys.list().first_page()
    assert len(proxy.seen) == 3 and raised.value.status == 503
    gaps = [later.at - earlier.at for earlier, later in zip(proxy.seen, proxy.seen[1:])]
    assert 0.37 <= gaps[0] <= 0.9 and 0.75 <= gaps[1] <= 1.6, f"backoff 0.5 s then 1 s, less jitter: {gaps}"


def test_a_connection_cut_without_an_answer_is_retried(proxy: FaultyProxy, brand: Brand) -> None:
    proxy.script = ["reset", "reset"]
    page = through(proxy, brand).keys.list().first_page()
    assert page.status == 200 and page.attempts == 3
    proxy.script = ["reset", "reset"]
    with pytest.raises(APIConnectionError):
        through(proxy, brand, max_retries=1).keys.list().first_page()


def test_a_slow_answer_times_out_and_is_retried(proxy: FaultyProxy, brand: Brand) -> None:
    proxy.script = ["sleep:1.5", "sleep:1.5"]
    started = time.monotonic()
    with pytest.raises(APITimeoutError):
        through(proxy, brand, timeout=0.3, max_retries=1).keys.list().first_page()
    assert len(proxy.seen) == 2 and time.monotonic() - started < 1.5
    proxy.script = ["sleep:1.5"]
    assert through(proxy, brand, timeout=0.5, max_retries=1).keys.list().first_page().attempts == 2


def test_an_answer_that_trickles_in_times_out_at_the_call_deadline(proxy: FaultyProxy, brand: Brand) -> None:
    # Each byte comes well within the timeout, the whole answer far outside it: the timeout bounds
    # the attempt, not each read, so a server sending a byte at a time cannot hold the call.
    proxy.script = ["drip:0.05"]
    started = time.monotonic()
    with pytest.raises(APITimeoutError):
        through(proxy, brand, timeout=0.5, max_retries=0).keys.list().first_page()
    assert time.monotonic() - started < 1.5
    # A slow answer that ends within the timeout is read whole, and the next call works.
    proxy.script = ["drip:0.0005"]
    client = through(proxy, brand, timeout=10, max_retries=0)
    assert client.keys.list().first_page().data
    assert client.keys.list().first_page().data


def test_a_refusal_is_not_retried(proxy: FaultyProxy, brand: Brand) -> None:
    with pytest.raises(ValidationError) as raised:
        through(proxy, brand).keys.create(name="", scopes=["assets:read"])
    assert len(proxy.seen) == 1
    assert raised.value.fields and raised.value.fields[0]["field"] == "name"
