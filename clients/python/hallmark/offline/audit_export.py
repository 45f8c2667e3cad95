"""Audits a compliance export with no server: the same checks as auditExport in packages/client (docs/COMPLIANCE.md)."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from .canonical_json import _number, canonical_json
from .checkpoint import CheckpointError, instant_seconds, open_signed_checkpoint, valid_time
from .keys import keys_of, public_key_bytes
from .merkle import leaf_hash, verify_inclusion

_MAX_PROBLEMS = 100
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
# The longest inclusion proof there is: a tree of 2^64 leaves is 64 levels high.
_MAX_AUDIT_PATH = 64
_MAX_SAFE_INTEGER = 2**53 - 1


@dataclass
class AuditReport:
    valid: bool
    asset_id: str
    #: From the verified checkpoint only; None when it did not verify.
    tree_size: int | None = None
    root_hash: str | None = None
    signed_by: str | None = None
    events_checked: int = 0
    #: Each problem found, with the event it concerns; empty when valid.
    problems: list[str] = field(default_factory=list)
    #: The account and environment whose history this is, as the export names them
    #: (``{"accountId", "environment"}``): when ``valid``, the checkpoint's key and every event's
    #: hash vouch for them. Compare them with the brand and environment expected.
    owner: dict[str, str] | None = None
    #: When the service signed the checkpoint (ISO 8601), from the verified checkpoint: the history is
    #: complete as of then; the service signs only its current tree, so an export cut short shows an
    #: older time. Demand a recent one. None for checkpoints signed before 2026-12-04 (no time).
    checkpoint_signed_at: str | None = None


def hash_provenance_record(
    *,
    asset_id: str,
    account_id: str,
    environment: str,
    sequence: int,
    type: str,
    occurred_at: str,
    data: Any,
    prev_hash: str | None,
) -> str:
    """SHA-256, hex, of the record's RFC 8785 canonical JSON: what an event's hash covers."""
    record = {
        "assetId": asset_id,
        "accountId": account_id,
        "environment": environment,
        "sequence": sequence,
        "type": type,
        "occurredAt": occurred_at,
        "data": data,
        "prevHash": prev_hash,
    }
    return hashlib.sha256(canonical_json(record).encode("utf-8")).hexdigest()


def _why_not_checkpoint_key(jwk: Mapping[str, Any], kid: str, account_id: str, environment: str) -> str | None:
    """Why a published key may not sign the checkpoint of the owner's asset, or None when it may.

    The service signs checkpoints only with the owner's own signing key in the asset's environment:
    a key the account registered (it holds the private half, so it could rewrite its own history), a
    key of the other environment (a leaked test key may register one) or of another account vouches
    for nothing.
    """
    # The account is in every event's hash; a key of another account never signs this asset's tree.
    account = jwk.get("hallmark_account")
    if account != account_id:
        whose = f"account {account}" if account else "an unnamed account (the key set has no hallmark_account)"
        return f"signed by key {kid} of {whose}, not by a key of the asset's account {account_id}."
    key_type = jwk.get("hallmark_key_type")
    if not isinstance(key_type, str):
        return (
            f"the key set does not say what kind of key {kid} is (no hallmark_key_type); "
            "fetch a current one from /.well-known/jwks.json."
        )
    if key_type != "signing":
        return (
            f"signed by key {kid}, a {key_type} key (one the account registered and holds the private half of), "
            f"not by a signing key the service holds for account {account_id}."
        )
    key_environment = jwk.get("hallmark_environment")
    if key_environment != environment:
        return (
            f"signed by key {kid} of the {key_environment or 'unnamed'} environment, "
            f"not by a key of the asset's environment {environment}."
        )
    return None


#: What a JSON value that is not an object is called, as the TypeScript audit says it.
_JSON_KINDS: tuple[tuple[type, str], ...] = (
    (bool, "a boolean"),
    (int, "a number"),
    (float, "a number"),
    (str, "a string"),
    (list, "an array"),
)


#: How long after its retirement a signing key may still date a checkpoint or a webhook (as `retirementGraceMs`).
RETIREMENT_GRACE_SECONDS = 60


def _why_not_after_retirement(jwk: Mapping[str, Any] | None, signed_at: str | None) -> str | None:
    """Why a checkpoint signed by `jwk` at `signed_at` cannot be the service's: its key was retired
    (`hallmark_retired_at`) before that time, past the grace, or the checkpoint gives no time."""
    if jwk is None or "hallmark_retired_at" not in jwk:
        return None
    retired, kid = jwk.get("hallmark_retired_at"), jwk.get("kid")
    if not isinstance(retired, str) or not valid_time(retired):
        return f"the key set gives key {kid} a retirement time that is not a time."
    if signed_at is None:
        return f"key {kid} was retired at {retired} and the checkpoint gives no time: it cannot be told from one made after."
    if instant_seconds(signed_at) > instant_seconds(retired) + RETIREMENT_GRACE_SECONDS:
        return f"signed at {signed_at} by key {kid}, retired at {retired}: the service signs with its active key only."
    return None


def _whole(value: Any) -> int | None:
    """A JSON number that is a whole number JavaScript holds exactly (1 and 1.0 alike, never true), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if abs(value) <= _MAX_SAFE_INTEGER else None
    if isinstance(value, float) and value.is_integer() and abs(value) <= _MAX_SAFE_INTEGER:
        return int(value)
    return None


def _is_audit_path(value: Any) -> bool:
    # Checked before a node is decoded: bytes.fromhex skips spaces, and a path of millions of nodes
    # would be held as bytes.
    return (
        isinstance(value, list)
        and len(value) <= _MAX_AUDIT_PATH
        and all(isinstance(node, str) and _HEX64.match(node) for node in value)
    )


#: What each member of an event the audit reads must be, as the TypeScript audit has it (same words).
_EVENT_MEMBERS: tuple[tuple[str, Any, str], ...] = (
    ("eventId", lambda v: isinstance(v, str), "a string"),
    ("sequence", lambda v: _whole(v) is not None, "a whole number"),
    ("type", lambda v: isinstance(v, str), "a string"),
    ("occurredAt", lambda v: isinstance(v, str), "a string"),
    ("data", lambda v: isinstance(v, Mapping), "an object"),
    ("prevHash", lambda v: v is None or isinstance(v, str), "a string or null"),
    ("hash", lambda v: isinstance(v, str), "a string"),
    ("leafIndex", lambda v: _whole(v) is not None, "a whole number"),
    ("leafHash", lambda v: isinstance(v, str), "a string"),
    ("auditPath", _is_audit_path, f"an array of at most {_MAX_AUDIT_PATH} hashes (64 lowercase hex digits each)"),
)

_MISSING = object()


def _why_not_an_event(event: Any) -> str | None:
    """Why an export's event cannot be read (not an object, a member missing or of another type), or None."""
    if not isinstance(event, Mapping):
        if event is None:
            return "is not an event but null"
        kind = next((name for cls, name in _JSON_KINDS if isinstance(event, cls)), f"a {type(event).__name__}")
        return f"is not an event but {kind}"
    # A member missing is never null: prevHash must be there, as null for the first event.
    wrong = [
        f"{name} is not {what}"
        for name, fits, what in _EVENT_MEMBERS
        if (value := event.get(name, _MISSING)) is _MISSING or not fits(value)
    ]
    return ", ".join(wrong) if wrong else None


def _inexact(literal: str) -> bool:
    """Whether a number literal has another value than its double as JavaScript writes it: the
    service writes every number so, and another digit there (`…921`, `…921.000000001`, for the
    double `…920`; `0.10000000000000001` for 0.1) hashes alike to a reader of doubles while
    ``json`` (for an integer), a Decimal reader or a person reads the other number. `1.0` or `1E2`
    have their double's value."""
    value = float(literal)
    if not math.isfinite(value):
        return True
    return Decimal(literal) != Decimal(_number(value))


def _audit_text(text: str | bytes, jwks: Mapping[str, Any]) -> AuditReport:
    """An export as the text of its file: JSON in which no object names a member twice, and every
    number has the value of its double as JavaScript writes it."""
    repeated: list[str] = []
    inexact: list[str] = []

    def integer_of(literal: str) -> int:
        if not inexact and _inexact(literal):
            inexact.append(literal)
        return int(literal)

    def float_of(literal: str) -> float:
        if not inexact and _inexact(literal):
            inexact.append(literal)
        return float(literal)

    def object_of(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        # As json.loads builds it (the last of two members kept), noting the first name said twice.
        made = dict(pairs)
        if not repeated and len(made) < len(pairs):
            seen: set[str] = set()
            for name, _ in pairs:
                if name in seen:
                    repeated.append(name)
                    break
                seen.add(name)
        return made

    try:
        document = json.loads(text, object_pairs_hook=object_of, parse_int=integer_of, parse_float=float_of)
    except ValueError:
        return AuditReport(False, "", problems=["The export is not JSON."])
    report = audit_export(document, jwks)
    problems: list[str] = []
    if repeated:
        shown = json.dumps(repeated[0], ensure_ascii=False)[:100]
        problems.append(f"The file names the member {shown} twice in one object: readers disagree on which one counts.")
    if inexact:
        problems.append(
            f"The file writes the number {inexact[0][:40]}, which readers take for different values "
            "(a reader of doubles hashes it as a neighbouring number)."
        )
    if problems:
        report.valid = False
        report.problems = [*problems, *report.problems][:_MAX_PROBLEMS]
    return report


def audit_export(document: Mapping[str, Any] | str | bytes, jwks: Mapping[str, Any]) -> AuditReport:
    """Checks an export (GET /compliance/{assetId}/export): the checkpoint's signature under a service
    signing key (`hallmark_key_type` "signing") of the asset's own account and environment (a key set
    without those members fails), then, against the signed size and root (never the unsigned copies), every
    event's hash, its link to the one before, its leaf and inclusion proof, and that the events are
    exactly the tree's leaves. An export as it arrived is taken: what cannot be read (an event that is
    not an object, a member of another type) is a problem of the report, never an exception.

    Give a file's text (str or bytes) rather than what ``json.load`` made of it: an object that names a
    member twice makes the export invalid (``json`` keeps the last of the two, other readers and a
    person the first, so such a file says two histories; the service never writes one).
    """
    if isinstance(document, (str, bytes)):
        return _audit_text(document, jwks)
    if not isinstance(document, Mapping):
        return AuditReport(False, "", problems=["The export is not a JSON object."])
    problems: list[str] = []

    def problem(text: str) -> None:
        if len(problems) < _MAX_PROBLEMS:
            problems.append(text)

    asset_value = document.get("assetId")
    if not isinstance(asset_value, str):
        # Read as a string only: a deep array there is neither text nor worth echoing.
        return AuditReport(False, "", problems=["The export's assetId is not a string."])
    asset_id = asset_value
    owner = document.get("owner") if isinstance(document.get("owner"), Mapping) else {}
    assert isinstance(owner, Mapping)
    account_id = owner.get("accountId")
    environment = owner.get("environment")
    # What the checkpoint's key and every event's hash are checked against, as the TypeScript audit
    # reads them: a member that is not a string is "" (never None, which a key set's missing
    # hallmark_account would equal: a key of no account would vouch for an export of no owner).
    account_text = account_id if isinstance(account_id, str) else ""
    environment_text = environment if isinstance(environment, str) else ""
    events_value = document.get("events")
    events: list[Any] = list(events_value) if isinstance(events_value, list) else []
    # Only the first _MAX_PROBLEMS are listed: a 2 MB export of a million zeros was a 73 MB report.
    unreadable: dict[int, str] = {}
    readable = [False] * len(events)
    for index, event in enumerate(events):
        why = _why_not_an_event(event)
        readable[index] = why is None
        if why is not None and len(unreadable) < _MAX_PROBLEMS:
            unreadable[index] = why
    unreadable_count = readable.count(False)

    def report(
        tree_size: int | None = None,
        root_hash: str | None = None,
        signed_by: str | None = None,
        checked: int = 0,
        signed_at: str | None = None,
    ) -> AuditReport:
        named = (
            {"accountId": account_id, "environment": environment}
            if isinstance(account_id, str) and isinstance(environment, str)
            else None
        )
        return AuditReport(not problems, asset_id, tree_size, root_hash, signed_by, checked, problems, named, signed_at)

    if not isinstance(events_value, list):
        problem("The export has no list of events.")
    for index, why in unreadable.items():
        problem(f"Event {index + 1}: {why}; it cannot be checked.")
    if unreadable_count > len(unreadable):
        problem(f"{unreadable_count - len(unreadable)} more events cannot be checked.")
    export_format = document.get("format")
    if export_format != "hallmark.compliance-export/1":
        problem(f"Unknown export format {export_format!r}." if isinstance(export_format, str) else "Unknown export format of another type.")
    checkpoint_value = document.get("checkpoint")
    note = checkpoint_value.get("note") if isinstance(checkpoint_value, Mapping) else None
    if not isinstance(note, str) or not note:
        problem("The export carries no signed checkpoint.")
        return report()

    refusals: list[str] = []
    keys = keys_of(jwks)
    keys_by_name: dict[str, Mapping[str, Any]] = {}

    def key_for(name: str) -> bytes | None:
        kid = name[name.rfind("/keys/") + len("/keys/") :]
        jwk = next(
            (k for k in keys if k.get("kid") == kid and k.get("kty") == "OKP" and k.get("crv") == "Ed25519" and k.get("x")),
            None,
        )
        if jwk is None:
            return None
        refusal = _why_not_checkpoint_key(jwk, kid, account_text, environment_text)
        if refusal is not None:
            refusals.append(refusal)
            return None
        keys_by_name[name] = jwk
        return public_key_bytes(jwk)

    try:
        checkpoint, signed_by = open_signed_checkpoint(note, key_for)
    except CheckpointError as error:
        problem(f"Checkpoint: {refusals[0] if refusals else error}")
        return report()

    tree_size, root_hash = checkpoint.tree_size, checkpoint.root_hash
    retired = _why_not_after_retirement(keys_by_name.get(signed_by), checkpoint.signed_at)
    if retired is not None:
        problem(f"Checkpoint: {retired}")
    if not checkpoint.origin.endswith(f"/assets/{asset_id}"):
        problem(f"The checkpoint is for {checkpoint.origin}, not asset {asset_id}.")
    if _whole(document.get("treeSize")) != tree_size or document.get("rootHash") != root_hash.hex():
        problem("The unsigned treeSize or rootHash differs from the signed checkpoint; the checkpoint's values were used.")
    if len(events) != tree_size:
        problem(f"The checkpoint covers {tree_size} events; the export holds {len(events)}.")

    previous: str | None = None
    # Events past the signed size are none of the tree's (said above): not worth a hash each.
    for index, event in enumerate(events[:tree_size]):
        if not readable[index]:
            # Listed above; no hash of it carries on: the next event's prevHash cannot be vouched for.
            previous = None
            continue
        where = f"Event {index + 1} ({event.get('eventId')})"
        leaf_index = _whole(event.get("leafIndex"))
        sequence = _whole(event.get("sequence"))
        if leaf_index != index or sequence != index + 1:
            problem(f"{where}: out of order (leaf {leaf_index}).")
        try:
            computed = hash_provenance_record(
                asset_id=asset_id,
                account_id=account_text,
                environment=environment_text,
                sequence=int(event["sequence"]),
                type=event["type"],
                occurred_at=event["occurredAt"],
                data=event["data"],
                prev_hash=event.get("prevHash"),
            )
        except (KeyError, TypeError, ValueError, OverflowError, RecursionError):
            # Missing or mistyped members, or data nested too deep to canonicalise: it hashes to nothing.
            computed = None
        event_hash = event.get("hash")
        if computed != event_hash:
            problem(f"{where}: its content does not hash to {event_hash}.")
        if event.get("prevHash") != previous:
            problem(f"{where}: prevHash does not match the previous event's hash.")
        previous = event_hash if isinstance(event_hash, str) else None
        leaf = leaf_hash(bytes.fromhex(event_hash)) if isinstance(event_hash, str) and _HEX64.match(event_hash) else b""
        if leaf.hex() != event.get("leafHash"):
            problem(f"{where}: leafHash is not the leaf of its hash.")
        try:
            path = [bytes.fromhex(node) for node in event.get("auditPath", [])]
        except (TypeError, ValueError):
            path = []
        if not isinstance(leaf_index, int) or not verify_inclusion(leaf_index, tree_size, leaf, path, root_hash):
            problem(f"{where}: its inclusion proof does not lead to the signed root.")
    return report(tree_size, root_hash.hex(), signed_by, min(len(events), tree_size), checkpoint.signed_at)
