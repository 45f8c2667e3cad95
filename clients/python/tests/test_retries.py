"""Retries, the Idempotency-Key kept across them, Retry-After and timeouts, through a proxy that fails on purpose."""

from __future__ import annotations

import socket
import threading
import time

import pytest
from conftest import Brand
from faulty_proxy import FaultyProxy
from scripted_server import ScriptedServer, envelope, json_answer

from hallmark import (
    APIConnectionError,
    APITimeoutError,
    ConflictError,
    DuplicateSerialError,
    Hallmark,
    InternalError,
    RateLimitedError,
    ServiceUnavailableError,
    ValidationError,
)
from hallmark._errors import parse_retry_after

SINCE = "2026-11-25T08:00:00Z"


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


def test_without_an_idempotency_key_a_post_whose_answer_was_lost_is_not_sent_again(proxy: FaultyProxy, brand: Brand) -> None:
    # The control: the same lost answer without a key. Sent again, it would run again (a second
    # code, here a duplicate): the 503 is raised instead, and the one code the first attempt made stands.
    proxy.script = ["forward-then-503", "503", "forward"]
    client = through(proxy, brand)
    body = {"gtin": brand.gtin(), "serialNumber": brand.serial()}
    with pytest.raises(ServiceUnavailableError):
        client.request("POST", "/api/v1/code/generate", json_body=body)
    assert len(proxy.seen) == 1
    with pytest.raises(DuplicateSerialError):
        brand.client.codes.generate(gtin=body["gtin"], serial_number=body["serialNumber"])


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


# Requests not safe to repeat (a POST without an Idempotency-Key its operation honours), against a
# scripted server: sent again only when the API certainly did nothing.


def test_a_post_without_a_key_is_not_sent_again_after_a_5xx(scripted: ScriptedServer) -> None:
    client = Hallmark("svc_test_key", base_url=scripted.url)
    scripted.script = lambda _request, _index: envelope(500, "INTERNAL_ERROR")
    with pytest.raises(InternalError):
        client.webhooks.endpoints.test("ep_1")
    assert len(scripted.received) == 1, "a test message sent again would be delivered twice"

    # Even a 503 with Retry-After: a busy refusal, but also what a store lost half-way through answers.
    scripted.received.clear()
    scripted.script = lambda _request, _index: envelope(503, "SERVICE_UNAVAILABLE", {"retry-after": "0"})
    with pytest.raises(ServiceUnavailableError):
        client.webhooks.endpoints.replay_failed("ep_1", since=SINCE)
    assert len(scripted.received) == 1


def test_a_post_without_a_key_is_not_sent_again_after_a_connection_cut_once_sent(scripted: ScriptedServer) -> None:
    scripted.script = lambda _request, _index: None
    with pytest.raises(APIConnectionError):
        Hallmark("svc_test_key", base_url=scripted.url).webhooks.endpoints.test("ep_1")
    assert len(scripted.received) == 1


def test_a_post_without_a_key_is_retried_after_a_429(scripted: ScriptedServer) -> None:
    scripted.script = lambda _request, index: (
        envelope(429, "RATE_LIMITED", {"retry-after": "0"}) if index == 0 else json_answer(202, {"replayed": 3})
    )
    replayed = Hallmark("svc_test_key", base_url=scripted.url).webhooks.endpoints.replay_failed("ep_1", since=SINCE)
    assert replayed == {"replayed": 3} and replayed.attempts == 2


def test_a_post_without_a_key_is_retried_when_no_connection_was_made() -> None:
    # A port nobody listens on for the first attempt; a server opens it before the retry (a backoff of at least 0.375 s).
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    later = ScriptedServer(script=lambda _request, _index: json_answer(202, {"messageId": "msg_1"}), port=port)
    opener = threading.Timer(0.15, later.start)
    opener.start()
    try:
        result = Hallmark("svc_test_key", base_url=f"http://127.0.0.1:{port}", max_retries=1).webhooks.endpoints.test("ep_1")
        assert result.attempts == 2 and len(later.received) == 1
    finally:
        opener.join()
        later.stop()


def test_verify_is_retried_all_the_same(scripted: ScriptedServer) -> None:
    # docs/SDK.md: a verify retried after a lost answer records one more scan, and nothing else.
    answers = [None, envelope(503, "SERVICE_UNAVAILABLE"), json_answer(200, {"verdict": "AUTHENTIC"})]
    scripted.script = lambda _request, index: answers[index]
    result = Hallmark("svc_test_key", base_url=scripted.url).codes.verify(url="https://id.example/01/09506000134352/21/A")
    assert result["verdict"] == "AUTHENTIC" and result.attempts == 3


def test_a_callers_idempotency_key_is_sent_but_makes_no_retry_safe_where_the_operation_ignores_it(
    scripted: ScriptedServer,
) -> None:
    scripted.script = lambda _request, _index: envelope(503, "SERVICE_UNAVAILABLE")
    client = Hallmark("svc_test_key", base_url=scripted.url)
    with pytest.raises(ServiceUnavailableError):
        client.call_raw("replayFailedWebhookMessages", path_params={"id": "ep_1"}, body={"since": SINCE}, idempotency_key="k-1")
    assert [request.headers.get("idempotency-key") for request in scripted.received] == ["k-1"]

    # Where the operation takes one, the same 503 is retried with the same key.
    scripted.received.clear()
    scripted.script = lambda _request, index: (
        envelope(503, "SERVICE_UNAVAILABLE") if index == 0 else json_answer(201, {"id": "b"})
    )
    client.request("POST", "/api/v1/blocklist", json_body={"gtin": "09506000134352"}, idempotency_key="k-2")
    assert [request.headers.get("idempotency-key") for request in scripted.received] == ["k-2", "k-2"]


def test_retry_after_is_read_as_the_typescript_sdk_reads_it() -> None:
    assert parse_retry_after("-5") == 0.0
    assert parse_retry_after("5, 5") == 5.0, "two Retry-After lines a proxy joined: the first counts"
    assert parse_retry_after("5,7") == 5.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0, "a date keeps its commas"
