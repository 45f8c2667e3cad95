"""Reads a Hallmark code's GS1 Digital Link: the subset of GS1's syntax that Hallmark's codes use.

The server and @hallmark/client check links with a port of the GS1 Barcode Syntax Engine
(packages/gs1/src/dl-syntax.ts). This reader applies the same rules to what a Hallmark code holds
(the key /01/, the qualifiers /22/, /10/, /21/ in GS1's order or with /21/ before /10/, AI 17 and
the signature in `sig` or AI 8030 in the query) and refuses, failing closed, any other AI in the
query, which the full engine might accept as a data attribute.
"""

from __future__ import annotations

import calendar
import datetime
import re
from dataclasses import dataclass

_URI_CHARACTERS = re.compile(r"^[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*$")
_BAD_DOMAIN_CHARACTERS = re.compile(r"[_~?#@!$&'()*+,;=%]")
_CSET82 = re.compile(r"^[!\"%&'()*+,\-./0-9:;<=>?A-Z_a-z]*$")
_CSET64 = re.compile(r"^[A-Za-z0-9\-_]*$")
_SIGNATURE = re.compile(r"^[A-Za-z0-9_-]{1,200}$")
_MAX_AIS = 64

# AI: (title, minimum length, maximum length) of the AIs a Hallmark code holds.
_AIS: dict[str, tuple[str, int, int]] = {
    "01": ("GTIN", 14, 14),
    "10": ("BATCH/LOT", 1, 20),
    "21": ("SERIAL", 1, 20),
    "22": ("CPV", 1, 20),
    "17": ("USE BY or EXPIRY", 6, 6),
    "8030": ("DIGSIG", 1, 90),
}
_PATH_QUALIFIERS = ("22", "10", "21")
_QUERY_AIS = ("17", "8030")


class LinkError(ValueError):
    """A link that is not a Hallmark code; `code` is INVALID_URL or MISSING_SIGNATURE, as the API answers."""

    def __init__(self, message: str, code: str = "INVALID_URL") -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class DigitalLink:
    origin: str
    gtin: str
    serial: str | None
    batch: str | None
    variant: str | None
    expiry: str | None
    signature: str | None


def _describe(ai: str) -> str:
    return f"AI {ai} ({_AIS[ai][0]})" if ai in _AIS else f"AI {ai}"


def _unescape(text: str, query: bool) -> str | None:
    """Percent-decoding as the syntax engine does it: %XY is one byte (one character), + is a space in a query."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "%" and i < len(text) - 2 and re.fullmatch(r"[0-9A-Fa-f]{2}", text[i + 1 : i + 3]):
            byte = int(text[i + 1 : i + 3], 16)
            if byte == 0:
                return None
            out.append(chr(byte))
            i += 3
            continue
        out.append(" " if query and char == "+" else char)
        i += 1
    return "".join(out)


def gs1_check_digit(digits: str) -> int:
    total = 0
    for i, char in enumerate(reversed(digits)):
        total += int(char) * (3 if i % 2 == 0 else 1)
    return (10 - total % 10) % 10


def _check_length(ai: str, value: str) -> None:
    _, minimum, maximum = _AIS[ai]
    if len(value) < minimum:
        raise LinkError(f"{_describe(ai)} is too short: {len(value)} characters, at least {minimum} needed.")
    if len(value) > maximum:
        raise LinkError(f"{_describe(ai)} is too long: {len(value)} characters, at most {maximum} allowed.")
    if "^" in value:
        raise LinkError(f"{_describe(ai)} contains ^, which GS1 data cannot carry.")


def _check_date(value: str, today: datetime.date) -> str | None:
    """GS1 YYMMDD (DD 00: the month's last day); the century puts the year within 49 years back and 50 ahead."""
    if not value.isdigit() or len(value) != 6:
        return "is not a date YYMMDD (digits only)"
    yy, month, day = int(value[:2]), int(value[2:4]), int(value[4:])
    current = today.year % 100
    century = 1900 if yy - current >= 51 else 2000 if yy - current > -50 else 2100
    if month < 1 or month > 12:
        return f"has month {value[2:4]}, which is not 01 to 12"
    if day > calendar.monthrange(century + yy, month)[1]:
        return f"has day {value[4:]}, which month {value[2:4]} does not have"
    return None


def _check_content(ai: str, value: str, today: datetime.date) -> None:
    problem: str | None = None
    if ai == "01":
        if not value.isascii() or not value.isdigit():
            problem = "contains a character that is not a digit"
        elif int(value[13]) != gs1_check_digit(value[:13]):
            expected = gs1_check_digit(value[:13])
            raise LinkError(
                f"The GTIN is not valid: the check digit is {value[13]}, but the first 13 digits call for {expected}."
            )
    elif ai in ("10", "21", "22"):
        if not _CSET82.match(value):
            problem = "contains a character outside GS1's set 82"
    elif ai == "17":
        problem = _check_date(value, today)
    elif ai == "8030":
        if not _CSET64.match(value):
            problem = "contains a character outside GS1's set 64"
    if problem:
        raise LinkError(f"{_describe(ai)} {problem}.")


def _valid_path(ais: list[str]) -> bool:
    if not ais or ais[0] != "01":
        return False
    rest = ais[1:]
    order = {ai: index for index, ai in enumerate(_PATH_QUALIFIERS)}
    if any(ai not in order for ai in rest) or len(set(rest)) != len(rest):
        return False
    indexes = [order[ai] for ai in rest]
    if indexes == sorted(indexes):
        return True
    # Hallmark also reads the interface spec's order, /21/<serial>/10/<batch> (docs/SIGNING.md).
    return rest[-2:] == ["21", "10"] and _valid_path(["01", *rest[:-2], "10", "21"])


def _origin(text: str) -> str:
    match = re.match(r"^([A-Za-z]+)://([^/?#]*)", text)
    return f"{match.group(1).lower()}://{match.group(2).lower()}" if match else ""


def parse_digital_link(
    text: str, *, require_signature: bool = True, today: datetime.date | None = None
) -> DigitalLink:
    """Reads a link (surrounding white space ignored); raises LinkError saying what is wrong."""
    uri = text.strip()
    day = today or datetime.datetime.now(datetime.timezone.utc).date()
    if not uri:
        raise LinkError("The link is empty.")
    if len(uri) > 2048:
        raise LinkError("The link is longer than 2048 characters.")
    if not _URI_CHARACTERS.match(uri):
        bad = next(c for c in uri if not _URI_CHARACTERS.match(c))
        raise LinkError(f"The link contains {bad!r}, which a URI cannot carry unencoded.")
    scheme = re.match(r"^(https?|HTTPS?)://", uri)
    if not scheme:
        raise LinkError("Not a GS1 Digital Link URL: it must start with https:// or http://.")
    after = uri[scheme.end() :]
    slash = after.find("/")
    domain = after if slash == -1 else after[:slash]
    bad_domain = _BAD_DOMAIN_CHARACTERS.search(domain)
    if bad_domain:
        raise LinkError(f"The host contains {bad_domain.group(0)!r}, which a host name cannot.")
    if slash < 1:
        raise LinkError("The link has no host, or no path after it.")
    path = after[slash:].split("#", 1)[0]
    query: str | None = None
    if "?" in path:
        path, query = path.split("?", 1)

    segments = path.split("/")[1:]
    start = -1
    for i in range(len(segments) - 2, -1, -2):
        if segments[i] not in ("01", *_PATH_QUALIFIERS):
            break
        if segments[i] == "01":
            start = i
            break
    if start == -1:
        raise LinkError(
            'The path ends in "/", so its last AI has no value.'
            if path.endswith("/")
            else "The path holds no GTIN (/01/<GTIN>) followed only by the qualifiers /22/, /10/ and /21/."
        )
    values: list[tuple[str, str, bool]] = []  # (ai, value, in the path)
    for i in range(start, len(segments), 2):
        ai, raw = segments[i], segments[i + 1]
        if raw == "":
            raise LinkError(f"/{ai}/ in the path has an empty value.")
        decoded = _unescape(raw, False)
        if decoded is None:
            raise LinkError(f"The value of {_describe(ai)} decodes to a NUL character.")
        _check_length(ai, decoded)
        values.append((ai, decoded, True))

    other: list[tuple[str, str | None]] = []
    count = len(values)
    for param in (query or "").split("&"):
        if param == "":
            continue
        if count >= _MAX_AIS:
            raise LinkError(f"The link carries more than {_MAX_AIS} AIs and parameters.")
        count += 1
        if "=" not in param:
            other.append((param, None))
            continue
        key, raw = param.split("=", 1)
        if not re.fullmatch(r"[0-9]*", key):
            other.append((key, raw))
            continue
        if key == "":
            raise LinkError('A query parameter has no name before "=".')
        if key in ("01", *_PATH_QUALIFIERS):
            raise LinkError(f"{_describe(key)} belongs in the path, as a qualifier of /01/, not in the query.")
        if key not in _QUERY_AIS:
            raise LinkError(
                f"The query holds AI {key}, which a Hallmark code does not carry; this offline reader refuses it."
            )
        if raw == "":
            raise LinkError(f"{_describe(key)} in the query has an empty value.")
        decoded = _unescape(raw, True)
        if decoded is None:
            raise LinkError(f"The value of {_describe(key)} decodes to a NUL character.")
        _check_length(key, decoded)
        values.append((key, decoded, False))

    path_ais = [ai for ai, _, in_path in values if in_path]
    if not _valid_path(path_ais):
        raise LinkError(
            f"The path /{'/…/'.join(path_ais)}/… is not a valid key and qualifiers: "
            "after /01/ GS1 allows, in this order, /22/ /10/ /21/ or /235/."
        )
    seen: set[str] = set()
    for ai, _, _ in sorted(values):
        if ai in seen:
            raise LinkError(f"AI {ai} is given twice.")
        seen.add(ai)
    for ai, value, _ in values:
        _check_content(ai, value, day)
    found = {ai: value for ai, value, _ in values}
    if "8030" in found and "21" not in found:
        raise LinkError("AI 8030 needs AI 01 with 21 beside it.")

    signatures = [value or "" for key, value in other if key == "sig"]
    if "8030" in found:
        signatures.append(found["8030"])
    signature: str | None = None
    if not signatures:
        if require_signature:
            raise LinkError("The link has no signature (query parameter sig or 8030).", "MISSING_SIGNATURE")
    elif len(signatures) > 1:
        raise LinkError("The link carries more than one signature (sig and 8030 together, or sig twice).")
    else:
        signature = signatures[0]
        if not _SIGNATURE.match(signature):
            raise LinkError("The signature is not base64url (A–Z a–z 0–9 - _, no padding).")
    return DigitalLink(
        origin=_origin(uri),
        gtin=found["01"],
        serial=found.get("21"),
        batch=found.get("10"),
        variant=found.get("22"),
        expiry=found.get("17"),
        signature=signature,
    )
