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


EMPTY_ROOT = hashlib.sha256(b"").digest()


def verify_consistency(first: int, second: int, first_root: bytes, second_root: bytes, proof: Sequence[bytes]) -> bool:
    """RFC 9162 2.1.4.2: the tree of size `second` with `second_root` extends the one of size `first`
    with `first_root` (as packages/merkle verifyConsistency checks it)."""
    if isinstance(first, bool) or isinstance(second, bool) or not isinstance(first, int) or not isinstance(second, int):
        return False
    if first < 0 or first > second or second >= 2**53:
        return False
    if len(first_root) != HASH_SIZE or len(second_root) != HASH_SIZE or any(len(p) != HASH_SIZE for p in proof):
        return False
    if first == second:
        return len(proof) == 0 and first_root == second_root
    if first == 0:
        return len(proof) == 0 and first_root == EMPTY_ROOT
    if len(proof) == 0:
        return False
    path = [first_root, *proof] if first & (first - 1) == 0 else list(proof)
    fn, sn = first - 1, second - 1
    while fn % 2 == 1:
        fn //= 2
        sn //= 2
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn % 2 == 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if fn % 2 == 0:
                while fn % 2 == 0 and fn != 0:
                    fn //= 2
                    sn //= 2
        else:
            sr = node_hash(sr, c)
        fn //= 2
        sn //= 2
    return sn == 0 and fr == first_root and sr == second_root
