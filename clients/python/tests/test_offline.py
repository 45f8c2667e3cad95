"""Offline verification of a code and audit of an export agree with the server."""

from __future__ import annotations

import base64
import copy
import json
import re
import time
from datetime import datetime, timezone
from typing import Any
from urllib.parse import quote

import pytest
from conftest import REPOSITORY, Brand
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from hallmark import Hallmark, audit_export, history_grew, verify_offline
from hallmark.offline import canonical_json, parse_digital_link, signed_message
from hallmark.offline.audit_export import hash_provenance_record
from hallmark.offline.checkpoint import note_key_hash
from hallmark.offline.digital_link import LinkError, gs1_check_digit
from hallmark.offline.keys import verify_ed25519
from hallmark.offline.merkle import leaf_hash, node_hash


def test_the_signing_vector_of_docs_signing_md() -> None:
    text = (REPOSITORY / "docs/SIGNING.md").read_text(encoding="utf-8")
    block = text[text.index("```text vector") :]
    vector = dict(re.findall(r"^([a-z ()]+):\s*(.*)$", block[: block.index("```", 5)], re.M))
    link = parse_digital_link(vector["link"])
    message = signed_message(
        kid=vector["kid"], gtin=link.gtin, serial=link.serial or "", batch=link.batch, variant=link.variant, expiry=link.expiry
    )
    assert message.hex() == vector["message (hex)"]
    assert link.signature == vector["signature"]
    signature = __import__("base64").urlsafe_b64decode(vector["signature"] + "==")
    assert verify_ed25519(bytes.fromhex(vector["public key (hex)"]), message, signature)


def test_a_genuine_code_whose_expiry_date_has_passed_is_not_valid_offline() -> None:
    private = Ed25519PrivateKey.generate()
    public = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    key = {"kty": "OKP", "crv": "Ed25519", "x": b64(public), "kid": "brand-key", "hallmark_environment": "live"}
    jwks = {"keys": [{**key, "hallmark_account": "acc_brand", "hallmark_gtin_prefixes": ["9506000"]}]}

    def dated(expiry: str) -> str:
        message = signed_message(kid="brand-key", gtin="09506000134352", serial="D-1", batch=None, variant=None, expiry=expiry)
        return f"https://brand.example/01/09506000134352/21/D-1?17={expiry}&sig={b64(private.sign(message))}"

    def at(moment: str) -> datetime:
        return datetime.fromisoformat(moment).replace(tzinfo=timezone.utc)

    assert verify_offline(dated("270131"), jwks, now=at("2027-01-31T23:59:59")).valid
    expired = verify_offline(dated("270131"), jwks, now=at("2027-02-01T00:00:00"))
    assert not expired.valid and expired.reason is not None and "expired on 2027-01-31" in expired.reason
    # Day 00 is the month's last day, December's too; 99 is 1999 in 2026 (GS1's rule) and 2099 in 2060.
    assert verify_offline(dated("270200"), jwks, now=at("2027-02-28T12:00:00")).valid
    assert not verify_offline(dated("270200"), jwks, now=at("2027-03-01T00:00:00")).valid
    assert verify_offline(dated("271200"), jwks, now=at("2027-12-31T23:00:00")).valid
    assert not verify_offline(dated("271200"), jwks, now=at("2028-01-01T00:00:00")).valid
    assert not verify_offline(dated("991231"), jwks, now=at("2026-12-04T00:00:00")).valid
    assert verify_offline(dated("991231"), jwks, now=at("2060-01-01T00:00:00")).valid


def test_no_key_vouches_for_a_gtin_whose_owner_has_none_in_the_set() -> None:
    operator = Ed25519PrivateKey.generate()
    public = operator.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    x = base64.urlsafe_b64encode(public).rstrip(b"=").decode()
    key = {"kty": "OKP", "crv": "Ed25519", "x": x, "kid": "op-key", "hallmark_environment": "live"}
    keys = [{**key, "hallmark_account": "acc_operator", "hallmark_signs_unowned": True}]
    message = signed_message(kid="op-key", gtin="08712345678906", serial="OP-2", batch=None, variant=None, expiry=None)
    signature = base64.urlsafe_b64encode(operator.sign(message)).rstrip(b"=").decode()
    link = f"https://x.example/01/08712345678906/21/OP-2?sig={signature}"
    assert verify_offline(link, {"keys": keys}).valid, "nobody owns the GTIN: the operator's code is genuine"

    owner = {"hallmark_account": "acc_new", "hallmark_gtins": ["08712345678906"], "hallmark_gtin_prefixes": []}
    owned = verify_offline(link, {"keys": keys, "hallmark_owners_without_keys": [{**owner, "hallmark_environment": "live"}]})
    assert not owned.valid and owned.reason is not None and "(it is owned by account acc_new)" in owned.reason
    in_test = verify_offline(link, {"keys": keys, "hallmark_owners_without_keys": [{**owner, "hallmark_environment": "test"}]})
    assert in_test.valid, "an owner in the test environment leaves a live verification as it was"
    made_up = verify_offline(
        "https://x.example/01/08712345678906/21/X?sig=" + "a" * 86,
        {"keys": keys, "hallmark_owners_without_keys": [{**owner, "hallmark_environment": "live"}]},
    )
    assert made_up.reason == (
        "GTIN 08712345678906 is owned by account acc_new, which has no live key in the set: no code of it is genuine."
    )


def test_canonical_json_writes_what_javascript_writes() -> None:
    # The expected texts are what packages/provenance's canonicalJson writes (members by UTF-16 code units: € before 😀).
    assert canonical_json({"b": 1, "a": [True, None, "é\n\u2028"], "\u20ac": 0, "\U0001f600": 1}) == (
        '{"a":[true,null,"é\\n\u2028"],"b":1,"\u20ac":0,"\U0001f600":1}'
    )
    numbers = [1.0, -0.0, 0.1, 1e21, 1e-7, 123456789012345680000.0, 1.5e-6, 2.5e300, 100.25]
    assert [canonical_json(n) for n in numbers] == [
        "1", "0", "0.1", "1e+21", "1e-7", "123456789012345680000", "0.0000015", "2.5e+300", "100.25",
    ]  # fmt: skip


@pytest.fixture(scope="module")
def code(client: Hallmark, brand: Brand) -> dict[str, str]:
    made = client.codes.generate(gtin=brand.gtin(), serial_number=brand.serial(), batch_number="L/1", expiry_date="2070-12-31")
    return dict(made)


def agree(client: Hallmark, url: str, jwks: dict[str, object]) -> tuple[str, bool]:
    online = client.codes.verify(url=url)
    offline = verify_offline(url, jwks)
    assert (online["verdict"] != "COUNTERFEIT") == offline.valid, f"{url}: online {online['verdict']}, offline {offline}"
    return online["verdict"], offline.valid


def test_a_code_verifies_offline_as_online(client: Hallmark, code: dict[str, str], brand: Brand) -> None:
    jwks = dict(client.keys.jwks())
    result = verify_offline(code["url"], jwks)
    assert result.valid and result.kid == code["keyId"] and result.account == brand.account_id
    assert (result.serial, result.batch, result.expiry) == (code["serial"], "L/1", "701231")
    assert agree(client, code["url"], jwks) == ("AUTHENTIC", True)

    gtin, serial, sig = code["gtin"], code["serial"], code["signature"]
    other_host_gs1_order = f"https://id.other.example/01/{gtin}/10/{quote('L/1', safe='')}/21/{serial}?8030={sig}&17=701231"
    assert agree(client, other_host_gs1_order, jwks) == ("AUTHENTIC", True)
    tampered_serial = code["url"].replace(f"/21/{serial}/", f"/21/{serial}X/")
    assert agree(client, tampered_serial, jwks) == ("COUNTERFEIT", False)
    forged = re.sub(r"sig=[^&]+", "sig=" + ("B" * 85 + "A"), code["url"])
    assert agree(client, forged, jwks) == ("COUNTERFEIT", False)
    test_keys_only = {"keys": [k for k in jwks["keys"] if k.get("hallmark_environment") == "test"]}
    assert not verify_offline(code["url"], test_keys_only).valid, "a live code needs a live key"


def test_a_key_of_another_account_does_not_vouch_offline(client: Hallmark, operator: Hallmark, base_url: str) -> None:
    # Another brand's genuine signature on this brand's GTIN: the server says COUNTERFEIT, and so does the check offline.
    mine, theirs = Brand(operator, base_url), Brand(operator, base_url)
    theirs_code = theirs.client.codes.generate(gtin=theirs.gtin(), serial_number="S-1")
    mine.client.codes.generate(gtin=mine.gtin(), serial_number="S-0")
    jwks = dict(client.keys.jwks())
    moved = theirs_code["url"].replace(f"/01/{theirs_code['gtin']}/", f"/01/{mine.gtin()}/")
    result = verify_offline(moved, jwks)
    assert not result.valid and result.reason
    assert client.codes.verify(url=moved)["verdict"] == "COUNTERFEIT"


def test_links_the_server_refuses_are_refused_offline(client: Hallmark, code: dict[str, str]) -> None:
    base = code["url"].split("?")[0]
    for link, expected in [
        (base, "MISSING_SIGNATURE"),
        (code["url"].replace("/21/", "/99/"), "INVALID_URL"),
        (code["url"] + "&10=X", "INVALID_URL"),
        (code["url"] + "&17=991231", "INVALID_URL"),
        (code["url"].replace(code["gtin"], code["gtin"][:13] + str((int(code["gtin"][13]) + 1) % 10)), "INVALID_URL"),
        ("ftp://x/01/09506000134352/21/1?sig=abc", "INVALID_URL"),
    ]:
        with pytest.raises(LinkError) as offline:
            parse_digital_link(link)
        assert offline.value.code == expected, link
        with pytest.raises(Exception) as online:
            client.codes.verify(url=link)
        assert getattr(online.value, "code", None) == expected, link


def test_an_export_audits_offline_and_a_changed_one_does_not(client: Hallmark, code: dict[str, str], brand: Brand) -> None:
    client.codes.verify(url=code["url"])
    obj = client.auction.objects.register(title="Watch", category="watch")
    client.auction.provenance.record(
        object_id=obj["object"]["id"], event_type="authenticated", actor_role="expert", evidence={"grade": 9.5, "notes": "ok €"}
    )
    jwks = dict(client.keys.jwks())
    # Reads wait for the Merkle projection (503 with Retry-After when it lags, as on a loaded machine).
    patient = client.with_options(max_retries=10)
    for asset_id in (code["assetId"], obj["object"]["id"]):
        export = dict(patient.compliance.export(asset_id))
        report = audit_export(export, jwks)
        assert report.valid, report.problems
        assert report.tree_size == len(export["events"]) >= 1 and report.signed_by
        # The checkpoint says when the tree was this size (it is signed with the rest): moments ago.
        assert report.checkpoint_signed_at is not None and report.checkpoint_signed_at in export["checkpoint"]["note"]
        signed_at = datetime.fromisoformat(report.checkpoint_signed_at.replace("Z", "+00:00"))
        assert abs((datetime.now(timezone.utc) - signed_at).total_seconds()) < 300
        retimed = copy.deepcopy(export)
        retimed["checkpoint"]["note"] = export["checkpoint"]["note"].replace(report.checkpoint_signed_at, "2099-01-01T00:00:00.000Z")
        assert not audit_export(retimed, jwks).valid, "a checkpoint whose time was changed does not verify"
        assert patient.compliance.verify_chain(asset_id)["isValid"] is True

        changed = copy.deepcopy(export)
        changed["events"][0]["data"]["tampered"] = True
        assert not audit_export(changed, jwks).valid
        foreign = {"keys": [{**k, "hallmark_account": "acc_other"} for k in jwks["keys"]]}
        refused = audit_export(export, foreign)
        assert not refused.valid and "not by a key of the asset's account" in refused.problems[0]


def test_a_history_that_grew_is_shown_to_extend_the_export_kept_before(client: Hallmark) -> None:
    """docs/COMPLIANCE.md, "Keep checkpoints": an auditor audits an export, keeps its report, audits a
    later one and checks the service's consistency proof between the two signed roots (history_grew);
    swapped, against another asset's report, or with a node of the proof changed, it does not hold."""
    patient = client.with_options(max_retries=10)
    objects = [client.auction.objects.register(title=f"Grown {i}", category="watch")["object"]["id"] for i in (0, 1)]
    for object_id in objects:
        client.auction.provenance.record(object_id=object_id, event_type="cataloged", actor_role="auction_house")
    # The key set once the account has signed (its signing key is made when it first signs).
    jwks = dict(client.keys.jwks())
    earlier = audit_export(patient.compliance.export_text(objects[0], format="json"), jwks)
    other = audit_export(patient.compliance.export_text(objects[1], format="json"), jwks)
    assert earlier.valid and other.valid, (earlier.problems, other.problems)
    for step in ("listed", "exhibited"):
        client.auction.provenance.record(object_id=objects[0], event_type=step, actor_role="auction_house")
    later = earlier
    for _ in range(100):  # the export follows the Merkle projection, which may lag a moment
        later = audit_export(patient.compliance.export_text(objects[0], format="json"), jwks)
        if later.tree_size == (earlier.tree_size or 0) + 2:
            break
        time.sleep(0.05)
    assert later.valid and later.tree_size == (earlier.tree_size or 0) + 2, later
    proof = list(patient.compliance.merkle.consistency(objects[0], from_=earlier.tree_size or 0, to=later.tree_size)["proof"])
    assert history_grew(earlier, later, proof)
    assert not history_grew(later, earlier, proof)
    assert not history_grew(other, later, proof)
    changed = [("1" if node[0] == "0" else "0") + node[1:] if i == 0 else node for i, node in enumerate(proof)]
    assert not history_grew(earlier, later, changed)


def test_a_test_environment_code_verifies_offline_only_for_the_test_environment(operator: Hallmark, base_url: str) -> None:
    created = operator.accounts.create(name="python-test-env", tier="enterprise", environment="test")
    sandbox = Hallmark(created["apiKey"]["secret"], base_url=base_url)
    prefix = Brand.serial()[3:12].translate(str.maketrans("abcdef", "123456"))
    operator.accounts.gtins.grant(created["account"]["id"], prefix="8" + prefix[:8], environment="test")
    body = f"08{prefix[:8]}001"
    gtin = body + str(gs1_check_digit(body))
    made = sandbox.codes.generate(gtin=gtin, serial_number="T-1")
    jwks = dict(sandbox.keys.jwks())
    assert verify_offline(made["url"], jwks, environment="test").valid
    assert not verify_offline(made["url"], jwks).valid
    assert sandbox.codes.verify(url=made["url"])["verdict"] == "AUTHENTIC"


# An export as compliance-service writes it, signed here by the owner's live signing key; then spoilt.


def _tree_root(leaves: list[bytes]) -> bytes:
    """RFC 9162 2.1.1: the hash of a tree of these leaf hashes."""
    if len(leaves) == 1:
        return leaves[0]
    split = 1 << ((len(leaves) - 1).bit_length() - 1)
    return node_hash(_tree_root(leaves[:split]), _tree_root(leaves[split:]))


def _inclusion_path(index: int, leaves: list[bytes]) -> list[bytes]:
    """RFC 9162 2.1.3.1: the audit path of a leaf, nearest sibling first."""
    if len(leaves) == 1:
        return []
    split = 1 << ((len(leaves) - 1).bit_length() - 1)
    if index < split:
        return _inclusion_path(index, leaves[:split]) + [_tree_root(leaves[split:])]
    return _inclusion_path(index - split, leaves[split:]) + [_tree_root(leaves[:split])]


def _signed_export() -> tuple[dict[str, Any], dict[str, Any]]:
    """A genuine export of three events and the key set that vouches for it."""
    private_key = Ed25519PrivateKey.generate()
    public_key = private_key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    owner = {"accountId": "acc_brand", "environment": "live"}
    events: list[dict[str, Any]] = []
    previous: str | None = None
    for index, event_type in enumerate(["code.generated", "scanned", "shipped"]):
        occurred_at, data = f"2026-01-0{index + 1}T00:00:00.000Z", {"step": index}
        event_hash = hash_provenance_record(
            asset_id="code_1", account_id="acc_brand", environment="live", sequence=index + 1,
            type=event_type, occurred_at=occurred_at, data=data, prev_hash=previous,
        )  # fmt: skip
        events.append({"eventId": f"ev{index}", "sequence": index + 1, "type": event_type, "occurredAt": occurred_at,
                       "data": data, "prevHash": previous, "hash": event_hash, "leafIndex": index})  # fmt: skip
        previous = event_hash
    leaves = [leaf_hash(bytes.fromhex(event["hash"])) for event in events]
    for index, event in enumerate(events):
        event["leafHash"] = leaves[index].hex()
        event["auditPath"] = [node.hex() for node in _inclusion_path(index, leaves)]
    root = _tree_root(leaves)
    body = f"hallmark/assets/code_1\n{len(leaves)}\n{base64.b64encode(root).decode()}\n"
    name = "hallmark/keys/kid-1"
    signature = base64.b64encode(note_key_hash(name, public_key) + private_key.sign(body.encode())).decode()
    document = {
        "format": "hallmark.compliance-export/1", "assetId": "code_1", "owner": owner, "treeSize": len(leaves),
        "rootHash": root.hex(), "checkpoint": {"note": f"{body}\n\u2014 {name} {signature}\n", "keyId": "kid-1"},
        "events": events,
    }  # fmt: skip
    jwk = {"kty": "OKP", "crv": "Ed25519", "kid": "kid-1", "x": base64.urlsafe_b64encode(public_key).rstrip(b"=").decode(),
           "hallmark_account": "acc_brand", "hallmark_environment": "live", "hallmark_key_type": "signing"}  # fmt: skip
    return document, {"keys": [jwk]}


def test_a_genuine_export_made_here_audits() -> None:
    document, jwks = _signed_export()
    report = audit_export(document, jwks)
    assert report.valid and report.problems == [] and report.events_checked == 3


def test_an_export_given_as_text_audits_and_one_naming_a_member_twice_does_not() -> None:
    document, jwks = _signed_export()
    text = json.dumps(document)
    assert audit_export(text, jwks).valid and audit_export(text.encode(), jwks).valid
    # A forged list of events first, the genuine one last: json keeps the last, a person reads the first.
    forged = json.dumps([{**event, "data": {"step": "forged"}} for event in document["events"]])
    twice = text.replace('"events": [', f'"events": {forged}, "events": [', 1)
    report = audit_export(twice, jwks)
    assert not report.valid
    assert report.problems[0] == 'The file names the member "events" twice in one object: readers disagree on which one counts.'
    # Inside an event, with the name spelled by an escape.
    inner = text.replace('"data": {"step": 1}', '"data": {"step": 9, "\\u0073tep": 1}', 1)
    assert inner != text and not audit_export(inner, jwks).valid
    assert audit_export("{not json", jwks).problems == ["The export is not JSON."]


def test_a_checkpoint_of_a_key_retired_since_is_refused_when_undated_or_dated_after() -> None:
    document, jwks = _signed_export()
    # The checkpoint made here gives no time: under a retired key it cannot be told from a forgery.
    jwks["keys"][0]["hallmark_retired_at"] = "2026-12-01T00:00:00.000Z"
    report = audit_export(document, jwks)
    assert not report.valid
    assert report.problems[0] == (
        "Checkpoint: key kid-1 was retired at 2026-12-01T00:00:00.000Z and the checkpoint gives no time:"
        " it cannot be told from one made after."
    )
    jwks["keys"][0]["hallmark_retired_at"] = "the first of December"
    assert audit_export(document, jwks).problems[0] == "Checkpoint: the key set gives key kid-1 a retirement time that is not a time."
    del jwks["keys"][0]["hallmark_retired_at"]
    assert audit_export(document, jwks).valid


@pytest.mark.parametrize(("event", "why"), [("x", "a string"), (None, "null"), ([], "an array"), (7, "a number")])
def test_an_event_that_is_not_an_object_is_a_problem_of_the_report(event: object, why: str) -> None:
    document, jwks = _signed_export()
    document["events"][1] = event
    report = audit_export(document, jwks)
    assert not report.valid
    assert report.problems[0] == f"Event 2: is not an event but {why}; it cannot be checked."
    # The events around it are still checked: the third's prevHash names a hash nobody can read.
    assert len(report.problems) == 2 and report.problems[1].startswith("Event 3 (ev2): prevHash does not match")
    assert (report.tree_size, report.events_checked) == (3, 3)


def test_an_event_with_members_of_another_type_or_an_export_without_events_is_reported() -> None:
    document, jwks = _signed_export()
    document["events"][1] = {**document["events"][1], "auditPath": 5, "data": {1, 2}, "hash": 7}
    report = audit_export(document, jwks)
    # Read as the TypeScript audit reads it, in the same words.
    assert not report.valid and report.problems[0] == (
        "Event 2: data is not an object, hash is not a string, auditPath is not an array of at most 64 hashes"
        " (64 lowercase hex digits each); it cannot be checked."
    )
    document["events"] = "none"
    assert audit_export(document, jwks).problems == [
        "The export has no list of events.",
        "The checkpoint covers 3 events; the export holds 0.",
    ]
    assert audit_export(["not", "an", "export"], jwks).problems == ["The export is not a JSON object."]  # type: ignore[arg-type]
