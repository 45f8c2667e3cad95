"""Every error code of packages/contracts/src/error-codes.ts has its class; the API's answers raise it."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable

import pytest
from conftest import REPOSITORY, Brand
from scripted_server import ScriptedServer

import hallmark
from hallmark import APIError, Hallmark, InvalidResponseError
from hallmark._errors import ERROR_CLASSES, ERROR_STATUS, error_from_response


def contract_codes() -> dict[str, int]:
    source = (REPOSITORY / "packages/contracts/src/error-codes.ts").read_text(encoding="utf-8")
    table = source[source.index("errorStatus = {") : source.index("} as const")]
    return {code: int(status) for code, status in re.findall(r"^\s+([A-Z_]+): (\d{3}),", table, re.M)}


def test_the_client_knows_every_code_of_the_contracts_with_its_status() -> None:
    codes = contract_codes()
    assert len(codes) >= 26
    assert ERROR_STATUS == codes
    assert set(ERROR_CLASSES) == set(codes)


@pytest.mark.parametrize("code", sorted(contract_codes()))
def test_every_code_maps_to_its_own_class(code: str) -> None:
    status = ERROR_STATUS[code]
    body = {"error": {"code": code, "message": "m", "details": {"a": 1}}, "meta": {"requestId": "req-1"}}
    error = error_from_response(status, {"x-request-id": "req-1"}, body)
    cls = ERROR_CLASSES[code]
    assert type(error) is cls and isinstance(error, APIError)
    assert cls.__name__.endswith("Error") and getattr(hallmark, cls.__name__) is cls
    assert (error.code, error.status, error.request_id, error.details) == (code, status, "req-1", {"a": 1})
    assert len({c.__name__ for c in ERROR_CLASSES.values()}) == len(ERROR_CLASSES)


def test_an_answer_without_the_envelope_is_an_api_error_with_its_status() -> None:
    error = error_from_response(502, {"x-request-id": "r"}, None)
    assert type(error) is APIError and (error.code, error.status, error.request_id) == ("HTTP_502", 502, "r")
    # A status only one code has gets that code's class: a proxy's 429 still says how long to wait.
    limited = error_from_response(429, {"retry-after": "3"}, "<html>Too Many Requests</html>")
    assert type(limited) is hallmark.RateLimitedError and limited.code == "HTTP_429" and limited.retry_after == 3
    assert type(error_from_response(503, {}, None)) is hallmark.ServiceUnavailableError
    # 404 is NOT_FOUND's and KEY_NOT_FOUND's, 409 DUPLICATE_SERIAL's and CONFLICT's: neither class is assumed.
    assert type(error_from_response(404, {}, None)) is APIError
    assert type(error_from_response(409, {}, None)) is APIError
    # A code this client does not know yet is an APIError that keeps it.
    unknown = error_from_response(418, {}, {"error": {"code": "TEAPOT", "message": "short and stout"}})
    assert type(unknown) is APIError and unknown.code == "TEAPOT"


def test_a_success_that_is_not_json_where_json_is_due_is_an_invalid_response_error(scripted: ScriptedServer) -> None:
    # A proxy's or a captive portal's sign-in page, answered 200.
    scripted.script = lambda _request, _index: (200, {"content-type": "text/html"}, b"<html>Sign in</html>")
    client = Hallmark("svc_test_key", base_url=scripted.url, max_retries=0)
    with pytest.raises(InvalidResponseError) as raised:
        client.codes.generate(gtin="09506000134352", serial_number="A")
    assert isinstance(raised.value, APIError)
    assert (raised.value.code, raised.value.status, raised.value.request_id) == ("INVALID_RESPONSE", 200, "req-0")
    with pytest.raises(InvalidResponseError):
        client.keys.list().first_page()
    # What answers text or bytes by design still does.
    scripted.script = lambda _request, _index: (200, {"content-type": "text/csv"}, b"scanId,gtin\ns1,09506000134352\n")
    assert client.scans.csv() == "scanId,gtin\ns1,09506000134352\n"
    scripted.script = lambda _request, _index: (200, {"content-type": "image/png"}, b"\x89PNG")
    assert client.codes.qr(url="https://id.example/01/09506000134352/21/A", format="png") == b"\x89PNG"


def test_a_redirect_from_an_operation_that_does_not_redirect_is_an_error(scripted: ScriptedServer) -> None:
    scripted.script = lambda _request, _index: (302, {"location": "/elsewhere"}, b"")
    client = Hallmark("svc_test_key", base_url=scripted.url, max_retries=0)
    with pytest.raises(APIError) as raised:
        client.codes.generate(gtin="09506000134352", serial_number="A")
    assert (raised.value.code, raised.value.status) == ("HTTP_302", 302)
    # The resolver's redirect is its answer, and request() answers a 3xx as it came.
    assert client.call_raw("resolveCompressedLink", path_params={"compressed": "x"}).status == 302
    assert client.request("GET", "/anywhere").status == 302


def _provokers(brand: Brand, operator: Hallmark, base_url: str) -> dict[str, Callable[[], object]]:
    client = brand.client
    other = Brand(operator, base_url)
    narrow = client.keys.create(name="narrow", scopes=["assets:read"])["secret"]
    one_gtin = brand.gtin()
    restricted = client.keys.create(name="restricted", scopes=["*"], restricted_to_gtins=[one_gtin])
    assert restricted["restrictions"] == {"gtins": [one_gtin]}
    revoked = client.keys.create(name="revoked", scopes=["assets:read"])
    client.keys.revoke(revoked["id"])
    expired = client.keys.create(name="expired", scopes=["assets:read"])
    client.keys.rotate(expired["id"], grace_seconds=0)
    made = client.codes.generate(gtin=brand.gtin(), serial_number=brand.serial())
    reused_key = f"reuse-{uuid.uuid4()}"
    client.codes.generate(gtin=brand.gtin(), serial_number=brand.serial(), idempotency_key=reused_key)

    def as_key(key: str) -> Hallmark:
        return Hallmark(key, base_url=base_url, max_retries=0)

    bad_gtin = brand.gtin()[:13] + str((int(brand.gtin()[13]) + 1) % 10)
    return {
        "MISSING_API_KEY": lambda: as_key("").keys.list().first_page(),
        "INVALID_API_KEY": lambda: as_key("svc_live_" + "0" * 64).keys.list().first_page(),
        "REVOKED_API_KEY": lambda: as_key(revoked["secret"]).keys.list().first_page(),
        "EXPIRED_API_KEY": lambda: as_key(expired["secret"]).keys.list().first_page(),
        "INSUFFICIENT_SCOPE": lambda: as_key(narrow).codes.generate(gtin=brand.gtin(), serial_number=brand.serial()),
        "KEY_RESTRICTED": lambda: as_key(restricted["secret"]).keys.list().first_page(),
        "VALIDATION_ERROR": lambda: client.keys.create(name="x", scopes=["no-such-scope"]),
        "INVALID_GTIN": lambda: client.codes.generate(gtin=bad_gtin, serial_number=brand.serial()),
        "DUPLICATE_SERIAL": lambda: client.codes.generate(gtin=made["gtin"], serial_number=made["serial"]),
        "MISSING_REQUIRED_FIELD": lambda: client.call("generateCode", body={"gtin": brand.gtin()}),
        "INVALID_URL": lambda: client.codes.verify(url="https://example.com/not/a/code"),
        "MISSING_SIGNATURE": lambda: client.codes.verify(url=made["url"].split("?")[0]),
        "KEY_NOT_FOUND": lambda: client.codes.verify(url=f"https://x.example/01/{other.gtin()}/21/S1?sig={'A' * 86}"),
        "GTIN_NOT_OWNED": lambda: client.codes.generate(gtin=other.gtin(), serial_number=brand.serial()),
        "GTIN_CLAIM_NOT_ALLOWED": lambda: client.gtins.claim(gtin=brand.gtin()),
        "NOT_FOUND": lambda: client.webhooks.endpoints.get("whe_nobody"),
        "METHOD_NOT_ALLOWED": lambda: client.request("DELETE", "/api/v1/keys"),
        "CONFLICT": lambda: operator.accounts.gtins.grant(brand.account_id, prefix=brand.prefix),
        "IDEMPOTENCY_KEY_REUSED": lambda: client.codes.generate(
            gtin=brand.gtin(), serial_number=brand.serial(), idempotency_key=reused_key
        ),
        "PAYLOAD_TOO_LARGE": lambda: client.codes.generate(
            gtin=brand.gtin(), serial_number=brand.serial(), metadata={"blob": "x" * 1_100_000}
        ),
        "UNSUPPORTED_MEDIA_TYPE": lambda: client.request(
            "POST", "/api/v1/code/verify", content=b"url=x", content_type="application/x-www-form-urlencoded"
        ),
        "REQUEST_HEADERS_TOO_LARGE": lambda: client.request("GET", "/api/v1/keys", headers={"x-padding": "a" * 20_000}),
    }


# Codes the tests cannot bring about over HTTP at will (CSRF_REJECTED needs the console's session
# cookie, which an API client never holds; EMBEDDED_LOAD_REFUSED is the resolver page's, outside the
# API): their mapping is checked above, and RATE_LIMITED and SERVICE_UNAVAILABLE are met for real in
# test_retries.py.
NOT_PROVOKED = {
    "CSRF_REJECTED",
    "EMBEDDED_LOAD_REFUSED",
    "GONE",
    "REQUEST_TIMEOUT",
    "INTERNAL_ERROR",
    "SERVICE_UNAVAILABLE",
    "RATE_LIMITED",
}


def test_the_api_s_answers_raise_the_class_of_their_code(brand: Brand, operator: Hallmark, base_url: str) -> None:
    provokers = _provokers(brand, operator, base_url)
    assert set(provokers) | NOT_PROVOKED == set(ERROR_STATUS)
    wrong: list[str] = []
    for code, provoke in provokers.items():
        try:
            provoke()
        except APIError as error:
            if type(error) is not ERROR_CLASSES[code] or error.status != ERROR_STATUS[code] or not error.request_id:
                wrong.append(f"{code}: got {type(error).__name__} {error}")
        else:
            wrong.append(f"{code}: no error")
    assert wrong == []
