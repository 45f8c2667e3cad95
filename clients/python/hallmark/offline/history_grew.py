"""Whether a later audited export's history extends an earlier one's, as historyGrew in packages/client checks it."""

from __future__ import annotations

import re
from collections.abc import Sequence

from .audit_export import AuditReport
from .merkle import verify_consistency

_HEX64 = re.compile(r"^[0-9a-f]{64}$")


def history_grew(earlier: AuditReport, later: AuditReport, proof: Sequence[str]) -> bool:
    """docs/COMPLIANCE.md, "Keep checkpoints": the RFC 9162 consistency proof the service gave
    (``hallmark.compliance.merkle.consistency(asset_id, from_=<earlier size>, to=<later size>)["proof"]``)
    leads from the earlier report's signed root to the later one's. Sizes and roots come from the
    reports (their verified checkpoints), never from the proof's answer, whose ``fromRootHash`` and
    ``toRootHash`` nobody signed. False when either report is not valid, they are of different assets
    or owners, the later is smaller, or the proof does not hold."""
    if not earlier.valid or not later.valid or earlier.asset_id != later.asset_id or earlier.owner != later.owner:
        return False
    if earlier.tree_size is None or later.tree_size is None or earlier.root_hash is None or later.root_hash is None:
        return False
    if isinstance(proof, (str, bytes)) or len(proof) > 128 or not all(isinstance(node, str) and _HEX64.match(node) for node in proof):
        return False
    if not _HEX64.match(earlier.root_hash) or not _HEX64.match(later.root_hash):
        return False
    return verify_consistency(
        earlier.tree_size,
        later.tree_size,
        bytes.fromhex(earlier.root_hash),
        bytes.fromhex(later.root_hash),
        [bytes.fromhex(node) for node in proof],
    )
