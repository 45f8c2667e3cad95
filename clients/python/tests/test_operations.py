"""The client's operation table is the running server's OpenAPI document, and the main operations work."""

from __future__ import annotations

import importlib.util
import json
import urllib.request
from pathlib import Path

from conftest import REPOSITORY, Brand

from hallmark import Hallmark, NotFoundError
from hallmark._operations import OPERATIONS

CLIENT = Path(__file__).resolve().parent.parent


def test_the_operations_table_is_generated_from_the_served_openapi_document(base_url: str) -> None:
    spec = importlib.util.spec_from_file_location("generate_operations", CLIENT / "scripts/generate_operations.py")
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    with urllib.request.urlopen(f"{base_url}/api/v1/openapi.json", timeout=30) as response:
        document = json.load(response)
    expected = generator.render(generator.operations_of(document))
    assert (CLIENT / "hallmark/_operations.py").read_text(encoding="utf-8") == expected, (
        "the API changed: run /usr/bin/python3 clients/python/scripts/generate_operations.py <base url>/api/v1/openapi.json"
    )


def test_docs_sdk_md_lists_every_method_with_its_operation() -> None:
    spec = importlib.util.spec_from_file_location("methods_table", CLIENT / "scripts/methods_table.py")
    assert spec is not None and spec.loader is not None
    table = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(table)
    docs = (REPOSITORY / "docs/SDK.md").read_text(encoding="utf-8")
    assert table.BEGIN in docs and table.END in docs, "docs/SDK.md has no table of the Python client's methods"
    written = docs[docs.index(table.BEGIN) : docs.index(table.END) + len(table.END)]
    assert written == table.render(), (
        "docs/SDK.md's table of methods is not the client's: put the output of "
        "/usr/bin/python3 clients/python/scripts/methods_table.py in its place"
    )


def test_every_operation_the_resources_name_exists() -> None:
    used: set[str] = set()
    for source in (CLIENT / "hallmark/resources").glob("*.py"):
        text = source.read_text(encoding="utf-8")
        used |= {name for name in OPERATIONS if f'"{name}"' in text}
    # The resolver's pages and the console are for browsers, and the console's sessions (a cookie) for its
    # page: every other operation of /api/v1 has a method.
    missing = sorted(
        name
        for name in set(OPERATIONS) - used
        if OPERATIONS[name].path.startswith("/api/v1/") and not OPERATIONS[name].path.startswith("/api/v1/sessions")
    )
    assert missing == [], f"operations without a method: {missing}"


def test_the_main_operations_of_each_area(client: Hallmark, brand: Brand, operator: Hallmark) -> None:
    me = client.accounts.me()
    assert me["account"]["id"] == brand.account_id and me.request_id
    assert any(claim["value"] == brand.prefix for claim in client.gtins.list())
    assert any(account["id"] == brand.account_id for account in operator.accounts.list(limit=100))

    code = client.codes.generate(gtin=brand.gtin(), serial_number=brand.serial(), metadata={"colour": "red"})
    verified = client.codes.verify(url=code["url"], location={"latitude": 52.5, "longitude": 13.4, "country": "DE"})
    assert verified["verdict"] == "AUTHENTIC"
    assert client.codes.qr(code["url"]).startswith(b"<")
    assert [c["assetId"] for c in client.codes.list(gtin=code["gtin"], serial=code["serial"])] == [code["assetId"]]
    assert client.codes.get(code["assetId"])["assetId"] == code["assetId"]
    batch = client.codes.generate_batch([{"gtin": brand.gtin(), "serialNumber": brand.serial()} for _ in range(3)])
    assert [r["index"] for r in batch["results"] if "code" in r] == [0, 1, 2]

    block = client.blocklist.create(gtin=code["gtin"], serial=code["serial"], kind="withdrawn", reason="recall")
    assert client.codes.verify(url=code["url"])["verdict"] == "SUSPICIOUS"
    assert [b["blockId"] for b in client.blocklist.list(gtin=code["gtin"])] == [block["blockId"]]
    assert client.blocklist.delete(block["blockId"])["status"] == "removed"
    bulk = client.blocklist.create_from_csv(f"gtin,serial,kind\n{code['gtin']},{brand.serial()},counterfeit\n")
    assert "block" in bulk["results"][0]
    # What one key made, removed at once (after a leak): the CSV's block, by this client's key.
    made_by = bulk["results"][0]["block"]["createdBy"]
    assert list(client.blocklist.list(created_by=made_by, status="active"))
    removed_blocks = client.blocklist.remove_made_by(made_by)
    assert removed_blocks["removed"] >= 1 and removed_blocks["more"] is False
    assert not list(client.blocklist.list(created_by=made_by, status="active"))
    link = client.links.create(gtin=code["gtin"], link_type="gs1:pip", href="https://brand.example/p", title="P", type="text/html")
    assert [each["id"] for each in client.links.list(created_by=link["createdBy"])] == [link["id"]]
    removed_links = client.links.remove_made_by(link["createdBy"])
    assert removed_links["removed"] >= 1 and removed_links["more"] is False
    assert not list(client.links.list(created_by=link["createdBy"]))

    report = client.codes.report(url=code["url"], reason="looks odd")
    assert any(r["reportId"] == report["reportId"] for r in client.codes.reports.list(status="pending"))
    assert client.codes.reports.dismiss(report["reportId"])["status"] == "dismissed"
    confirmed = client.codes.report(url=code["url"], reason="seen at a market")
    assert client.codes.reports.confirm(confirmed["reportId"], reason="fake")["status"] == "confirmed"
    assert client.codes.verify(url=code["url"])["verdict"] == "SUSPICIOUS"
    assert client.codes.reports.lift(confirmed["reportId"], reason="wrong code")["status"] == "lifted"
    assert client.codes.verify(url=code["url"])["verdict"] == "AUTHENTIC"

    patient = client.with_options(max_retries=10)  # Merkle reads answer 503 + Retry-After while the projection lags
    assert patient.compliance.merkle.root(code["assetId"])["treeSize"] >= 1
    assert patient.compliance.export_text(code["assetId"], format="csv").count("\n") >= 2
    assert "riskThresholds" in client.compliance.config.get()["config"]

    obj = client.auction.objects.register(title="Bottle", category="bottle")["object"]
    assert client.auction.objects.provenance(obj["id"])
    assert any(o["serial"] == obj["service_serial"] for o in client.auction.objects.list())
    assert client.auction.objects.public_verify(obj["service_serial"])

    schema = client.schemas.create(name="wine", vertical="wine", fields=[{"name": "vintage", "type": "integer", "required": True}])
    assert client.schemas.validate(schema["id"], {"vintage": "old"})["isValid"] is False
    client.schemas.delete(schema["id"])
    try:
        client.schemas.get(schema["id"])
        raise AssertionError("a deleted schema answers 404")
    except NotFoundError as error:
        assert error.status == 404

    key = client.keys.create(name="reader", scopes=["assets:read"], expires_in="1d")
    assert client.keys.revoke(key["id"])["status"] == "revoked"
    assert client.system.ping("code-service")["service"] == "code-service"
    assert client.system.openapi()["openapi"].startswith("3.")
    assert client.usage.get().status == 200
    assert len(list(client.usage.keys(limit=1))) >= 1
    assert client.account.branding.update(display_name="Python Brand")["displayName"] == "Python Brand"
    first_event = patient.compliance.export(code["assetId"])["events"][0]["eventId"]
    assert patient.compliance.merkle.proof(code["assetId"], event_id=first_event)["leafIndex"] == 0
