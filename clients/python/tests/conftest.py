"""Fixtures for tests against a running Hallmark product.

HALLMARK_TEST_BASE_URL and HALLMARK_TEST_OPERATOR_KEY name it (test/e2e/python-client.test.ts
starts one and sets them). Each session makes an enterprise account of its own, granted a GS1
Company Prefix, so runs never meet each other's codes.
"""

from __future__ import annotations

import os
import random
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from hallmark import ApiResult, Hallmark  # noqa: E402
from faulty_proxy import FaultyProxy  # noqa: E402
from hallmark.offline.digital_link import gs1_check_digit  # noqa: E402
from scripted_server import ScriptedServer  # noqa: E402

REPOSITORY = Path(__file__).resolve().parents[3]


def _setting(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(
            f"{name} is not set: these tests need a running product "
            "(run them through test/e2e/python-client.test.ts, or set HALLMARK_TEST_BASE_URL and HALLMARK_TEST_OPERATOR_KEY)"
        )
    return value


@pytest.fixture(scope="session")
def base_url() -> str:
    return _setting("HALLMARK_TEST_BASE_URL")


@pytest.fixture(scope="session")
def operator(base_url: str) -> Iterator[Hallmark]:
    client = Hallmark(_setting("HALLMARK_TEST_OPERATOR_KEY"), base_url=base_url)
    yield client
    client.close()


class Brand:
    """An account of the session's own with a company prefix: `gtin()` makes GTINs it owns."""

    def __init__(self, operator: Hallmark, base_url: str, tier: str = "enterprise") -> None:
        created = operator.accounts.create(name=f"python-{uuid.uuid4().hex[:6]}", tier=tier)  # type: ignore[arg-type]
        self.account_id: str = created["account"]["id"]
        self.key: str = created["apiKey"]["secret"]
        self.client = Hallmark(self.key, base_url=base_url)
        # A 9-digit prefix picked at random: another run's or suite's account never owns it.
        self.prefix = "9" + "".join(random.choice("0123456789") for _ in range(8))
        self.grant: ApiResult = operator.accounts.gtins.grant(self.account_id, prefix=self.prefix)
        self._next = 0

    def gtin(self) -> str:
        self._next += 1
        body = f"0{self.prefix}{self._next:03d}"
        return body + str(gs1_check_digit(body))

    @staticmethod
    def serial() -> str:
        return f"PY-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="session")
def brand(operator: Hallmark, base_url: str) -> Brand:
    return Brand(operator, base_url)


@pytest.fixture(scope="session")
def client(brand: Brand) -> Hallmark:
    return brand.client


@pytest.fixture()
def proxy(base_url: str) -> Iterator[FaultyProxy]:
    """A proxy in front of the product that records every request and fails the ones a test scripts."""
    running = FaultyProxy(base_url).start()
    yield running
    running.stop()


@pytest.fixture()
def scripted() -> Iterator[ScriptedServer]:
    """A server on 127.0.0.1 that answers as the test scripts it (no product needed)."""
    running = ScriptedServer().start()
    yield running
    running.stop()
