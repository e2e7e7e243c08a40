"""A waiting run shows where it waits; an approval's action trail is readable over HTTP."""

import base64
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from ecp_core.demo import EXAMPLE_GRAPH
from ecp_core.memory import MemoryStore
from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration

SECRET = "t" * 40
SEED = base64.b64encode(bytes(range(5, 37))).decode("ascii")


def auth(role: str = "admin", tenant: str = "acme") -> dict[str, str]:
    return {"Authorization": f"Bearer {mint_token(SECRET, tenant=tenant, roles=[role])}"}


@pytest.fixture
def client() -> Iterator[TestClient]:
    settings = Settings(jwt_secret=SECRET, audit_signing_key=SEED, dispatch_poll_seconds=0.02)
    with TestClient(create_app(settings, storage=MemoryStore())) as test_client:
        yield test_client


def waiting_run(client: TestClient) -> dict[str, object]:
    assert client.post("/v1/graphs", json=EXAMPLE_GRAPH, headers=auth()).status_code == 201
    deployment = {"deployment_ref": "refunds", "graph_id": "refund-triage"}
    assert client.post("/v1/deployments", json=deployment, headers=auth()).status_code == 201
    started = client.post(
        "/runs",
        json={"deployment_ref": "refunds", "input": {"order": "A-1"}},
        headers={**auth(), "Prefer": "wait=30"},
    )
    run = dict(started.json())
    assert run["status"] == "waiting_approval", run
    return run


@pytest.mark.spec("§2.2 approval-paused-state")
def test_a_waiting_run_shows_its_paused_state_until_it_moves_on(client):
    run = waiting_run(client)
    [approval_id] = run["pending_approval_ids"]
    paused = run["paused"]
    assert isinstance(paused, dict)
    assert paused["approval_id"] == approval_id
    assert isinstance(paused["node_id"], str)
    assert isinstance(paused["input_payload"], dict)
    resolved = client.post(
        f"/deployments/refunds/approvals/{approval_id}/resolve",
        json={"decision": "approve"},
        headers=auth("approver"),
    )
    assert resolved.json()["run"]["paused"] is None
    assert client.get(f"/runs/{run['run_id']}", headers=auth()).json()["paused"] is None


@pytest.mark.spec("§2.2 approval-action-record")
def test_an_approvals_trail_lists_each_action_oldest_first(client):
    run = waiting_run(client)
    [approval_id] = run["pending_approval_ids"]
    path = f"/v1/approvals/{approval_id}/actions"
    before = client.get(path, headers=auth("approver"))
    assert before.status_code == 200, before.text
    assert [entry["action"] for entry in before.json()["actions"]] == ["requested"]
    client.post(
        f"/deployments/refunds/approvals/{approval_id}/resolve",
        json={"decision": "reject", "reason": "not this one"},
        headers=auth("approver"),
    )
    after = client.get(path, headers=auth("operator")).json()
    assert after["approval_id"] == approval_id
    actions = after["actions"]
    assert [entry["action"] for entry in actions] == ["requested", "denied"]
    assert actions[1]["actor"]["subject"]
    assert actions[1]["occurred_at"] >= actions[0]["occurred_at"]
    assert client.get(path, headers=auth(tenant="other")).status_code == 404
    assert client.get(path, headers=auth("viewer")).status_code == 403
    assert client.get("/v1/approvals/nope/actions", headers=auth()).status_code == 404
