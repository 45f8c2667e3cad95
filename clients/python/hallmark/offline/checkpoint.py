"""C2SP signed checkpoints (https://c2sp.org/tlog-checkpoint, https://c2sp.org/signed-note) with Ed25519."""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone

from .keys import verify_ed25519

_SIGNATURE_PREFIX = "\u2014 "
# A signature line after its em dash: the key's name, one space, the base64 of key hash and signature.
_SIGNATURE_LINE = re.compile(r"[!-~]+ [A-Za-z0-9+/]+={0,2}")
# Signature lines a note may have (Go's note package takes at most 100).
_MAX_SIGNATURE_LINES = 100


_SIGNED_AT_PREFIX = "hallmark-signed-at "
_ISO_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")


@dataclass(frozen=True)
class Checkpoint:
    origin: str
    tree_size: int
    root_hash: bytes
    #: When the service signed it (ISO 8601, UTC), from the extension line ``hallmark-signed-at``;
    #: None for checkpoints signed before 2026-12-04. The service signs only its current tree.
    signed_at: str | None = None


class CheckpointError(ValueError):
    pass


def note_key_hash(name: str, public_key: bytes) -> bytes:
    """The signed note's 4-byte key hash of an Ed25519 key: SHA-256(name || "\\n" || 0x01 || key)[:4]."""
    return hashlib.sha256(f"{name}\n".encode() + b"\x01" + public_key).digest()[:4]


def _parse_body(body: str) -> Checkpoint | None:
    lines = body.split("\n")
    if len(lines) < 3:
        return None
    origin, size, root = lines[0], lines[1], lines[2]
    if not origin or not re.fullmatch(r"\d{1,16}", size):
        return None
    try:
        root_hash = base64.b64decode(root, validate=True)
    except binascii.Error:
        return None
    if len(root_hash) != 32 or base64.b64encode(root_hash).decode() != root:
        return None
    # Extension lines (C2SP): ours is the signing time, at most once; others are not ours to read.
    times = [line[len(_SIGNED_AT_PREFIX) :] for line in lines[3:] if line.startswith(_SIGNED_AT_PREFIX)]
    if len(times) > 1 or (times and not valid_time(times[0])):
        return None
    return Checkpoint(origin=origin, tree_size=int(size), root_hash=root_hash, signed_at=times[0] if times else None)


def instant_seconds(text: str) -> float:
    """Unix seconds of a time `valid_time` took."""
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()


def valid_time(text: str) -> bool:
    """An instant as JavaScript's toISOString writes it, and a real one (no 31 February)."""
    if not _ISO_TIME.fullmatch(text):
        return False
    try:
        datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ")
    except ValueError:
        return False
    return True


def open_signed_checkpoint(note: str, key_for: Callable[[str], bytes | None]) -> tuple[Checkpoint, str]:
    """Verifies the first signature line whose key `key_for` knows, then reads size and root: (checkpoint, signer)."""
    split = note.find("\n\n")
    if split < 0:
        raise CheckpointError("The checkpoint has no signature block.")
    body = note[: split + 1]
    # Every line after the blank one is a signature, and the note ends with a newline, as the
    # signed-note format says: text after a good signature is no part of what was signed.
    block = note[split + 2 :]
    lines = block[:-1].split("\n") if block.endswith("\n") else []
    if not 1 <= len(lines) <= _MAX_SIGNATURE_LINES:
        raise CheckpointError(f"The checkpoint's signature block is not 1 to {_MAX_SIGNATURE_LINES} lines ending with a newline.")
    for line in lines:
        if not line.startswith(_SIGNATURE_PREFIX):
            raise CheckpointError("A signature line does not start with an em dash.")
        if not _SIGNATURE_LINE.fullmatch(line[len(_SIGNATURE_PREFIX) :]):
            raise CheckpointError("A signature line is malformed.")
    for line in lines:
        parts = line[len(_SIGNATURE_PREFIX) :].split(" ")
        if len(parts) < 2 or not parts[0] or not parts[1]:
            raise CheckpointError("A signature line is malformed.")
        name, blob = parts[0], parts[1]
        public_key = key_for(name)
        if public_key is None:
            continue
        try:
            data = base64.b64decode(blob)
        except binascii.Error:
            data = b""
        if len(data) != 68 or data[:4] != note_key_hash(name, public_key):
            raise CheckpointError(f"The signature by {name} does not match its key.")
        if not verify_ed25519(public_key, body.encode("utf-8"), data[4:]):
            raise CheckpointError(f"The signature by {name} does not verify.")
        checkpoint = _parse_body(body)
        if checkpoint is None:
            raise CheckpointError("The checkpoint text is malformed.")
        return checkpoint, name
    raise CheckpointError("No signature on the checkpoint is by a known key.")
