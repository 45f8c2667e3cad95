"""Checks that need no server: a code's signature and a compliance export, against a saved key set."""

from .audit_export import AuditReport, audit_export, hash_provenance_record
from .canonical_json import canonical_json
from .history_grew import history_grew
from .digital_link import DigitalLink, LinkError, parse_digital_link
from .keys import key_owns_gtin, keys_bound_to_gtin
from .verify_offline import OfflineVerification, signed_message, verify_offline

__all__ = [
    "AuditReport",
    "DigitalLink",
    "LinkError",
    "OfflineVerification",
    "audit_export",
    "canonical_json",
    "hash_provenance_record",
    "history_grew",
    "key_owns_gtin",
    "keys_bound_to_gtin",
    "parse_digital_link",
    "signed_message",
    "verify_offline",
]
