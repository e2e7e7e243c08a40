"""Salted commitments over HTTP (ADR 0047), on PostgreSQL and on the memory store.

A tenant opts in with ``PUT /v1/audit/settings``; its runs then write version 3 records whose
salts are stored apart. Erasure through ``POST /v1/retention/erasure-requests`` destroys the
salts and keeps the chain and signatures verifying, for the service and for the reference
verifier of docs/audit-format.md run on the exported timeline.
"""

import base64
import hashlib
import json
from collections.abc import Iterator

import psycopg
import pytest
import rfc8785
from starlette.testclient import TestClient
from tests.support.audit_doc import reference_verifier

from ecp_core.demo import EXAMPLE_GRAPH
from ecp_core.memory import MemoryStore
from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration

SECRET = "s" * 40
VERIFIER = reference_verifier()
PROBLEM_JSON = "application/problem+json"


class Storage:
    """A look inside the storage behind the app: where the salts are, and a way to forge one."""

    def __init__(self, store: MemoryStore | None, url: str | None) -> None:
        self.store, self.url = store, url

    def salts(self, audit_ids: list[str]) -> int:
        """How many of these records' salts the salt table holds."""
        if self.store is not None:
            return len(set(self.store.tables.table("audit_salts")) & set(audit_ids))
        with psycopg.connect(self.url) as conn:
            row = conn.execute(
                "SELECT count(*) FROM ecp_audit_salts WHERE audit_id = ANY(%s)", (audit_ids,)
            ).fetchone()
        return row[0]

    def in_records(self, audit_ids: list[str]) -> bool:
        """Whether any salt is stored with the records themselves (it must not be)."""
        if self.store is not None:
            records = self.store.tables.table("audit")
            return any(records[audit_id].pii_salt is not None for audit_id in audit_ids)
        with psycopg.connect(self.url) as conn:
            columns = conn.execute(
                "SELECT column_name FROM information_schema.columns"
                " WHERE table_name = 'ecp_audit_records' AND column_name LIKE '%%salt%%'"
            ).fetchall()
        return bool(columns)

    def forge(self, audit_id: str, salt: bytes) -> None:
        """Replace a stored salt behind the service's back."""
        if self.store is not None:
            self.store.tables.table("audit_salts")[audit_id] = salt.hex()
            return
        with psycopg.connect(self.url) as conn:
            conn.execute(
                "UPDATE ecp_audit_salts SET salt = %s WHERE audit_id = %s", (salt, audit_id)
            )


@pytest.fixture(params=["postgres", "memory"])
def served(request) -> Iterator[tuple[TestClient, Storage]]:
    """The app on a fresh PostgreSQL database and on the memory store, with a look inside."""
    memory = request.param == "memory"
    url = None if memory else request.getfixturevalue("fresh_database")
    settings = Settings(
        database_url=url,
        jwt_secret=SECRET,
        audit_signing_key=base64.b64encode(bytes(range(21, 53))).decode(),
    )
    store = MemoryStore() if memory else None
    with TestClient(create_app(settings, start_workers=False, storage=store)) as client:
        yield client, Storage(store, url)


def auth(role="admin", tenant="acme"):
    token = mint_token(SECRET, tenant=tenant, roles=[role], subject=f"{role}@{tenant}")
    return {"Authorization": f"Bearer {token}"}


def completed_run(client, tenant="acme"):
    """Register, deploy, start and approve the example graph for ``tenant``; the run id."""
    assert client.post("/v1/graphs", json=EXAMPLE_GRAPH, headers=auth(tenant=tenant)).is_success
    client.post(
        "/v1/deployments",
        json={"deployment_ref": "refunds", "graph_id": "refund-triage"},
        headers=auth(tenant=tenant),
    )
    run = client.post(
        "/runs",
        json={"deployment_ref": "refunds", "input": {"email": "ana@example.com", "vip": True}},
        headers=auth(tenant=tenant),
    ).json()
    waiting = client.app.state.runtime.ecp.runs.drive(tenant, run["run_id"])
    answer = client.post(
        f"/deployments/refunds/approvals/{waiting.pending_approval_ids[0]}/resolve",
        json={"decision": "approve"},
        headers=auth(tenant=tenant),
    )
    assert answer.json()["run"]["status"] == "completed"
    return run["run_id"]


def outsider(client, timeline, head=None):
    keys = client.get("/v1/audit/signing-keys", headers=auth()).json()["keys"]
    return VERIFIER["verify_timeline"](timeline, keys, head)


@pytest.mark.spec("§9 audit-settings")
def test_settings_default_to_2_and_switch_one_tenant_only(served):
    client, _ = served
    default = client.get("/v1/audit/settings", headers=auth())
    assert default.status_code == 200
    assert default.json() == {
        "tenant_id": "acme",
        "digest_version": 2,
        "updated_at": None,
        "updated_by": None,
    }
    put = client.put("/v1/audit/settings", json={"digest_version": 3}, headers=auth())
    assert put.status_code == 200
    body = put.json()
    assert (body["digest_version"], body["updated_by"]) == (3, "admin@acme")
    assert body["updated_at"].endswith("Z")
    assert client.get("/v1/audit/settings", headers=auth()).json() == body
    other = client.get("/v1/audit/settings", headers=auth(tenant="beta")).json()
    assert (other["tenant_id"], other["digest_version"]) == ("beta", 2)
    back = client.put("/v1/audit/settings", json={"digest_version": 2}, headers=auth())
    assert back.json()["digest_version"] == 2


@pytest.mark.spec("§9 audit-settings", "C1 field-locations", "C1 status-codes")
@pytest.mark.parametrize(
    "body",
    [
        {"digest_version": 1},
        {"digest_version": 4},
        {"digest_version": 0},
        {"digest_version": "3"},
        {"digest_version": True},
        {"digest_version": 3.0},
        {"digest_version": None},
        {},
        {"digest_version": 3, "salt": "mine"},
    ],
)
def test_a_bad_body_is_a_422_and_changes_nothing(served, body):
    client, _ = served
    answer = client.put("/v1/audit/settings", json=body, headers=auth())
    assert answer.status_code == 422
    assert answer.headers["content-type"].startswith(PROBLEM_JSON)
    assert answer.json()["errors"]
    assert client.get("/v1/audit/settings", headers=auth()).json()["digest_version"] == 2


@pytest.mark.spec("§9 audit-settings", "C2 permission-table")
@pytest.mark.parametrize("role", ["operator", "approver", "analyst", "viewer", "worker"])
def test_only_admins_read_or_change_the_settings(served, role):
    client, _ = served
    assert client.get("/v1/audit/settings", headers=auth(role)).status_code == 403
    changed = client.put("/v1/audit/settings", json={"digest_version": 3}, headers=auth(role))
    assert changed.status_code == 403
    assert client.get("/v1/audit/settings").status_code == 401
    assert client.get("/v1/audit/settings", headers=auth()).json()["digest_version"] == 2


@pytest.mark.spec("§9 salt-erasure", "§4.2 erasure-request", "C4 audit-format-doc")
def test_erasing_a_version_3_run_over_http_keeps_it_verifying_and_destroys_the_salts(served):
    client, storage = served
    earlier = completed_run(client)
    client.put("/v1/audit/settings", json={"digest_version": 3}, headers=auth())
    run_id = completed_run(client)
    other = completed_run(client, tenant="beta")
    before = client.get(f"/runs/{run_id}/timeline", headers=auth()).json()
    entries = before["entries"]
    audit_ids = [entry["audit_id"] for entry in entries]
    assert {entry["digest_version"] for entry in entries} == {3}
    assert storage.salts(audit_ids) == len(entries)
    assert not storage.in_records(audit_ids)  # stored apart, joined on reads
    first = entries[0]
    salt = bytes.fromhex(first["pii_salt"])
    # Before erasure the value and the published salt match the commitment; without the salt,
    # the version 2 rule does not.
    stored = first["pii_commitments"]["input_snapshot"]
    assert VERIFIER["commit"]("input_snapshot", first["input_snapshot"], salt) == stored
    plain = "sha256:" + hashlib.sha256(rfc8785.dumps(first["input_snapshot"])).hexdigest()
    assert plain != stored
    for tenant, rid in (("acme", earlier), ("beta", other)):
        timeline = client.get(f"/runs/{rid}/timeline", headers=auth(tenant=tenant)).json()
        assert {entry["digest_version"] for entry in timeline["entries"]} == {2}
        assert all(entry["pii_salt"] is None for entry in timeline["entries"])
    verdict = outsider(client, before, (len(entries), entries[-1]["record_digest"]))
    assert verdict["verified"] and verdict["signature_verified"] is True, verdict["error"]
    verified = client.get(f"/runs/{run_id}/audit/verify", headers=auth()).json()

    erased = client.post(
        "/v1/retention/erasure-requests", json={"run_id": run_id, "reason": "gdpr"}, headers=auth()
    )
    assert erased.status_code == 200
    assert erased.json()["newly_erased"] >= len(entries)
    assert storage.salts(audit_ids) == 0
    after = client.get(f"/runs/{run_id}/timeline", headers=auth()).json()
    for old, new in zip(entries, after["entries"], strict=True):
        assert new["erased"] is True and new["pii_salt"] is None
        assert new["input_snapshot"] is None
        for kept in ("record_digest", "pii_commitments", "signature", "signing_key_id"):
            assert new[kept] == old[kept]
    again = client.get(f"/runs/{run_id}/audit/verify", headers=auth()).json()
    assert (again["verified"], again["signature_verified"], again["record_count"]) == (
        True,
        True,
        verified["record_count"],
    )
    assert verified["verified"] and verified["signature_verified"]
    verdict = outsider(client, after, (len(entries), entries[-1]["record_digest"]))
    assert verdict["verified"] and verdict["signature_verified"] is True, verdict["error"]
    records = client.get(f"/deployments/refunds/audits?run_id={run_id}", headers=auth()).json()
    assert all(record["pii_salt"] is None for record in records["records"])


@pytest.mark.spec("§9 salt-erasure", "C4 chain-per-run")
def test_a_salt_changed_in_storage_or_in_the_export_fails_verification(served):
    client, storage = served
    client.put("/v1/audit/settings", json={"digest_version": 3}, headers=auth())
    run_id = completed_run(client)
    timeline = client.get(f"/runs/{run_id}/timeline", headers=auth()).json()
    target = timeline["entries"][1]
    tampered = json.loads(json.dumps(timeline))
    salt = target["pii_salt"]
    tampered["entries"][1]["pii_salt"] = ("0" if salt[0] != "0" else "1") + salt[1:]
    verdict = outsider(client, tampered)
    assert verdict["verified"] is False
    assert verdict["error"].startswith(target["audit_id"])
    storage.forge(target["audit_id"], bytes(32))
    result = client.get(f"/runs/{run_id}/audit/verify", headers=auth()).json()
    assert (result["verified"], result["failed_audit_id"]) == (False, target["audit_id"])
    assert result["signature_verified"] is True  # the signed digest never covered the salt
