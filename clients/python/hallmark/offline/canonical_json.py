"""RFC 8785 JSON Canonicalization Scheme, as packages/provenance/src/canonical-json.ts writes it."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any


def _number(value: float) -> str:
    """ECMAScript's Number::toString: the shortest digits that round-trip, in JavaScript's notation."""
    if math.isnan(value) or math.isinf(value):
        raise ValueError("JCS cannot hold a non-finite number")
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    digits_tuple = Decimal(repr(abs(value))).normalize().as_tuple()
    digits = "".join(str(d) for d in digits_tuple.digits)
    exponent = digits_tuple.exponent
    assert isinstance(exponent, int)
    k = len(digits)
    n = k + exponent  # value = 0.digits × 10^n
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = f"{digits[:n]}.{digits[n:]}"
    elif -6 < n <= 0:
        text = "0." + "0" * (-n) + digits
    else:
        mantissa = digits if k == 1 else f"{digits[0]}.{digits[1:]}"
        text = f"{mantissa}e{'+' if n - 1 >= 0 else '-'}{abs(n - 1)}"
    return sign + text


def _string(value: str) -> str:
    if any(0xD800 <= ord(char) <= 0xDFFF for char in value):
        raise ValueError("JCS cannot hold a lone surrogate")
    return json.dumps(value, ensure_ascii=False)


def _utf16_key(text: str) -> bytes:
    return text.encode("utf-16-be", "surrogatepass")


def canonical_json(value: Any) -> str:
    """Object members sorted by UTF-16 code units, no white space, numbers and strings as JavaScript writes them."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        if abs(value) < 2**53:
            return str(value)
        # JavaScript, which hashed it, holds a number as a double: a whole number that no double holds
        # exactly would be hashed as its neighbour while this dict shows another value.
        try:
            double = float(value)
        except OverflowError:
            raise ValueError("JCS cannot hold a non-finite number") from None
        if int(double) != value:
            raise ValueError("JCS cannot hold a whole number that a double does not hold exactly")
        return _number(double)
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(canonical_json(item) for item in value) + "]"
    if isinstance(value, dict):
        members = sorted(value.items(), key=lambda item: _utf16_key(str(item[0])))
        return "{" + ",".join(f"{_string(str(key))}:{canonical_json(member)}" for key, member in members) + "}"
    raise ValueError(f"JCS cannot hold a {type(value).__name__}")
