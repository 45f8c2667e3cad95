"""The offline link reader against the GS1 Barcode Syntax Engine's own Digital Link vectors
(packages/gs1/src/fixtures/gs1-syntax-engine-dl-vectors.json): it never accepts a link the engine
refuses, and accepts every GTIN link the engine accepts that holds only the AIs a Hallmark code holds."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from conftest import REPOSITORY

from hallmark.offline.digital_link import LinkError, parse_digital_link

VECTORS: dict[str, Any] = json.loads(
    (REPOSITORY / "packages/gs1/src/fixtures/gs1-syntax-engine-dl-vectors.json").read_text(encoding="utf-8")
)
CASES = [v for v in VECTORS["parse"] + VECTORS["setDataStr"] if not v.get("options")]


def reads_only_hallmark_ais(uri: str) -> bool:
    """A /01/ link whose AIs are 01, 22, 10, 21 in the path and 17, 8030 in the query."""
    path, _, query = uri.partition("?")
    if not re.search(r"/01/[^/]+((/22|/10|/21)/[^/]+)*$", path):
        return False
    keys = [param.split("=", 1)[0] for param in query.split("&") if param]
    return all(not key.isdigit() or key in ("17", "8030") for key in keys)


def accepted(uri: str) -> bool:
    try:
        parse_digital_link(uri, require_signature=False)
    except LinkError:
        return False
    return True


@pytest.mark.parametrize("vector", CASES, ids=[f"{v['source']} {v['uri'][:60]}" for v in CASES])
def test_the_reader_agrees_with_the_syntax_engine(vector: dict[str, Any]) -> None:
    uri: str = vector["uri"]
    if not vector["valid"]:
        # Hallmark reads /21/ before /10/ on purpose (docs/SIGNING.md); the engine refuses that order.
        assert not accepted(uri) or re.search(r"/21/[^/]+/10/[^/]+$", uri.partition("?")[0]), uri
    elif reads_only_hallmark_ais(uri):
        assert accepted(uri), uri
    else:
        # Another key or a data attribute a code does not carry: refused, failing closed.
        assert not accepted(uri), uri


def test_the_vectors_hold_links_of_each_kind() -> None:
    valid_gtin = [v for v in CASES if v["valid"] and reads_only_hallmark_ais(v["uri"])]
    assert len(CASES) > 100 and len(valid_gtin) >= 10
