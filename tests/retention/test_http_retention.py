"""Retention over HTTP: policy, holds, erasure (409 under a hold), the log, and the permission."""

import base64

import pytest
from starlette.testclient import TestClient

from ecp_core.demo import EXAMPLE_GRAPH
from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration

SECRET = "r" * 40


@pytest.fixture
def client(fresh_database, tmp_path):
    settings = Settings(
        database_url=fresh_database,
        jwt_secret=SECRET,
        data_dir=tmp_path,
        audit_signing_key=base64.b64encode(bytes(range(11, 43))).decode(),
    )
    with TestClient(create_app(settings, start_workers=False)) as test_client:
        yield test_client


def auth(role="admin", tenant="acme"):
    return {"Authorization": f"Bearer {mint_token(SECRET, tenant=tenant, roles=[role])}"}


def completed_run(client):
    assert client.post("/v1/graphs", json=EXAMPLE_GRAPH, headers=auth()).status_code in (200, 201)
    client.post(
        "/v1/deployments",
        json={"deployment_ref": "refunds", "graph_id": "refund-triage"},
        headers=auth(),
    )
    run = client.post(
        "/runs",
        json={"deployment_ref": "refunds", "input": {"email": "ana@example.com"}},
        headers=auth(),
    ).json()
    runtime = client.app.state.runtime
    waiting = runtime.ecp.runs.drive("acme", run["run_id"])
    answer = client.post(
        f"/deployments/refunds/approvals/{waiting.pending_approval_ids[0]}/resolve",
        json={"decision": "approve"},
        headers=auth(),
    )
    assert answer.json()["run"]["status"] == "completed"
    return run["run_id"]


@pytest.mark.spec(
    "§4.2 erasure-request", "§4.2 legal-hold-routes", "§7 legal-hold-409", "§3.2 crypto-erase-v2"
)
def test_erasure_through_http_keeps_the_chain_verifying(client):
    run_id = completed_run(client)
    before = client.get(f"/runs/{run_id}/audit/verify", headers=auth()).json()
    hold = client.post(
        "/v1/retention/legal-holds", json={"reason": "litigation", "run_id": run_id}, headers=auth()
    )
    assert hold.status_code == 201
    refused = client.post(
        "/v1/retention/erasure-requests", json={"run_id": run_id, "reason": "gdpr"}, headers=auth()
    )
    assert refused.status_code == 409
    assert refused.json()["code"] == "legal_hold_active"
    assert (
        client.delete(
            f"/v1/retention/legal-holds/{hold.json()['hold_id']}", headers=auth()
        ).status_code
        == 200
    )
    erased = client.post(
        "/v1/retention/erasure-requests", json={"run_id": run_id, "reason": "gdpr"}, headers=auth()
    )
    assert erased.status_code == 200
    assert erased.json()["newly_erased"] > 0
    timeline = client.get(f"/runs/{run_id}/timeline", headers=auth()).json()["entries"]
    for entry in timeline:
        assert entry["erased"] is True
        assert entry["input_snapshot"] is None and entry["output_snapshot"] is None
        assert entry["erasure_reason"] == "gdpr"
    after = client.get(f"/runs/{run_id}/audit/verify", headers=auth()).json()
    assert (after["verified"], after["signature_verified"], after["record_count"]) == (
        True,
        True,
        before["record_count"],
    )
    again = client.post(
        "/v1/retention/erasure-requests", json={"run_id": run_id, "reason": "gdpr"}, headers=auth()
    )
    assert again.json()["newly_erased"] == 0
    log = client.get("/v1/retention/audit-log?limit=3", headers=auth()).json()
    assert len(log["entries"]) == 3
    assert log["next_cursor"] is not None
    holds = client.get("/v1/retention/legal-holds", headers=auth()).json()["holds"]
    assert holds[0]["released_at"] is not None


@pytest.mark.spec("§4.2 retention-policy-route", "§7 ttl-validation")
def test_policy_round_trip_and_validation(client):
    assert client.get("/v1/retention/policy", headers=auth()).json()["source"] == "system_default"
    put = client.put(
        "/v1/retention/policy",
        json={"audit_ttl_seconds": 3600, "run_ttl_seconds": None},
        headers=auth(),
    )
    assert put.json() == {
        "tenant_id": "acme",
        "audit_ttl_seconds": 3600,
        "run_ttl_seconds": None,
        "enabled": True,
        "source": "tenant",
    }
    for bad in (0, -5, 1.5, True, "60", 2147483648):
        response = client.put(
            "/v1/retention/policy",
            json={"audit_ttl_seconds": bad, "run_ttl_seconds": None},
            headers=auth(),
        )
        assert response.status_code == 422, bad
    assert client.get("/v1/retention/policy", headers=auth()).json()["audit_ttl_seconds"] == 3600


@pytest.mark.spec("§5 role-rules", "§5 tenant-isolation")
def test_retention_needs_the_admin_permission_and_stays_in_the_tenant(client):
    run_id = completed_run(client)
    assert client.get("/v1/retention/policy", headers=auth("operator")).status_code == 403
    other = client.post(
        "/v1/retention/erasure-requests",
        json={"run_id": run_id, "reason": "x"},
        headers=auth(tenant="globex"),
    )
    assert other.status_code == 404
    assert (
        client.post(
            "/v1/retention/erasure-requests",
            json={"tenant_id": "acme", "reason": "x"},
            headers=auth(tenant="globex"),
        ).status_code
        == 404
    )
