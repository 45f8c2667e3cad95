"""RFC 9162 Merkle tree hashes and inclusion proofs (SHA-256), as packages/merkle checks them."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

HASH_SIZE = 32


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def root_from_inclusion_proof(index: int, size: int, leaf: bytes, proof: Sequence[bytes]) -> bytes | None:
    """The root an inclusion proof leads to (RFC 9162 2.1.3.2), or None when it cannot belong to that index and size."""
    if index < 0 or index >= size or len(leaf) != HASH_SIZE or any(len(p) != HASH_SIZE for p in proof):
        return None
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            return None
        if fn % 2 == 1 or fn == sn:
            r = node_hash(p, r)
            if fn % 2 == 0:
                while fn % 2 == 0 and fn != 0:
                    fn //= 2
                    sn //= 2
        else:
            r = node_hash(r, p)
        fn //= 2
        sn //= 2
    return r if sn == 0 else None


def verify_inclusion(index: int, size: int, leaf: bytes, proof: Sequence[bytes], root: bytes) -> bool:
    computed = root_from_inclusion_proof(index, size, leaf, proof)
    return computed is not None and len(root) == HASH_SIZE and computed == root
