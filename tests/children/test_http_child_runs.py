"""Child runs over HTTP, on the memory store with the real dispatcher (ADR 0046).

Graphs with ``kind: "subgraph"`` nodes are registered as JSON; a parent → child → grandchild run
completes through the dispatcher; each chain verifies on its own and the parent's record names
its child; ``GET /runs/{run_id}/children`` pages ChildRunSummaryResponse items; a legal hold on
the parent refuses erasing the child, and erasing the parent after the release erases the child.
"""

import base64
import itertools
import time
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from ecp_core.memory import MemoryStore
from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration

SECRET = "c" * 40
SEED = base64.b64encode(bytes(range(7, 39))).decode("ascii")


def auth(role: str = "admin", tenant: str = "acme") -> dict[str, str]:
    return {"Authorization": f"Bearer {mint_token(SECRET, tenant=tenant, roles=[role])}"}


def leaf_graph() -> dict[str, Any]:
    return {
        "graph_id": "leaf",
        "entry": "work",
        "nodes": [
            {
                "id": "work",
                "kind": "action",
                "action": {
                    "name": "set",
                    "fingerprint": "set/1",
                    "arguments": {"values": {"ok": 1}},
                },
            },
            {"id": "done", "kind": "end"},
        ],
        "edges": [{"source": "work", "target": "done"}],
    }


def calling_graph(graph_id: str, ref: str, calls: int = 1) -> dict[str, Any]:
    """``calls`` subgraph nodes in a row, each starting ``ref`` with the customer copied over."""
    names = [f"call{i}" for i in range(calls)]
    nodes = [
        {
            "id": name,
            "kind": "subgraph",
            "subgraph": {
                "deployment_ref": ref,
                "input": [
                    {"operation": "copy", "source_path": "customer", "target_path": "customer"}
                ],
            },
        }
        for name in names
    ]
    order = [*names, "done"]
    return {
        "graph_id": graph_id,
        "entry": names[0],
        "nodes": [*nodes, {"id": "done", "kind": "end"}],
        "edges": [{"source": a, "target": b} for a, b in itertools.pairwise(order)],
    }


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    settings = Settings(jwt_secret=SECRET, audit_signing_key=SEED, dispatch_poll_seconds=0.02)
    with TestClient(create_app(settings, storage=MemoryStore())) as test_client:
        for graph, ref in (
            (leaf_graph(), "leaf"),
            (calling_graph("mid", "leaf"), "mid"),
            (calling_graph("top", "mid"), "top"),
            (calling_graph("fan", "leaf", calls=3), "fan"),
        ):
            registered = test_client.post("/v1/graphs", json=graph, headers=auth())
            assert registered.status_code == 201, registered.text
            body = {"deployment_ref": ref, "graph_id": graph["graph_id"]}
            deployed = test_client.post("/v1/deployments", json=body, headers=auth())
            assert deployed.status_code == 201, deployed.text
        yield test_client


def start(client: TestClient, ref: str) -> dict[str, Any]:
    body = {"deployment_ref": ref, "input": {"customer": "ada@example.com"}}
    answer = client.post("/runs", json=body, headers=auth())
    assert answer.status_code == 201, answer.text
    return answer.json()


def ended(client: TestClient, run_id: str) -> dict[str, Any]:
    for _ in range(1000):
        run = client.get(f"/runs/{run_id}", headers=auth()).json()
        if run["status"] in ("completed", "failed", "terminated_by_policy"):
            return run
        time.sleep(0.01)
    raise AssertionError(f"run {run_id} did not end")


def children(client: TestClient, run_id: str, **query: Any) -> Any:
    return client.get(f"/runs/{run_id}/children", params=query, headers=auth())


def only_child(client: TestClient, run_id: str) -> dict[str, Any]:
    answer = children(client, run_id)
    assert answer.status_code == 200, answer.text
    (child,) = answer.json()["children"]
    return child


def timeline(client: TestClient, run_id: str) -> list[dict[str, Any]]:
    answer = client.get(f"/runs/{run_id}/timeline", headers=auth())
    assert answer.status_code == 200, answer.text
    return answer.json()["entries"]


def verified(client: TestClient, run_id: str) -> bool:
    answer = client.get(f"/runs/{run_id}/audit/verify", headers=auth()).json()
    return answer["verified"] is True and answer["signature_verified"] is True


@pytest.mark.spec("§2.1 subgraph-node", "§2.1 child-run-summary", "§2.1 child-run-listing")
def test_a_parent_child_grandchild_run_completes_with_chains_of_their_own(client):
    top = start(client, "top")
    assert ended(client, top["run_id"])["status"] == "completed"
    mid = only_child(client, top["run_id"])
    grandchild = only_child(client, mid["run_id"])
    assert children(client, grandchild["run_id"]).json() == {"children": [], "next_cursor": None}
    assert mid == {
        "run_id": mid["run_id"],
        "status": "completed",
        "deployment_ref": "mid",
        "graph_version_ref": "mid@1",
        "thread_id": top["thread_id"],
        "parent_run_id": top["run_id"],
        "campaign_id": None,
    }
    assert grandchild["parent_run_id"] == mid["run_id"]
    assert grandchild["deployment_ref"] == "leaf"
    for parent, child in ((top, mid), (mid, grandchild)):
        (record, _end) = timeline(client, parent["run_id"])
        assert record["status"] == "succeeded"
        assert record["execution_metadata"]["child_run_id"] == child["run_id"]
        assert record["execution_metadata"]["deployment_ref"] == child["deployment_ref"]
    for run_id in (top["run_id"], mid["run_id"], grandchild["run_id"]):
        assert verified(client, run_id)
        assert {entry["run_id"] for entry in timeline(client, run_id)} == {run_id}
    final = client.get(f"/runs/{top['run_id']}", headers=auth()).json()
    assert final["output"]["call0"]["call0"] == {"customer": "ada@example.com", "ok": 1}


@pytest.mark.spec("§2.1 child-run-listing", "C7 link-header")
def test_children_page_with_a_cursor_and_stay_in_their_tenant(client):
    fan = start(client, "fan")
    ended(client, fan["run_id"])
    first = children(client, fan["run_id"], limit=2)
    assert first.status_code == 200
    page = first.json()
    assert len(page["children"]) == 2
    assert page["next_cursor"] is not None
    assert 'rel="next"' in first.headers["link"]
    rest = children(client, fan["run_id"], limit=2, cursor=page["next_cursor"]).json()
    assert len(rest["children"]) == 1
    assert rest["next_cursor"] is None
    ids = [c["run_id"] for c in (*page["children"], *rest["children"])]
    assert ids == sorted(ids)
    assert {c["parent_run_id"] for c in (*page["children"], *rest["children"])} == {fan["run_id"]}
    viewer = client.get(f"/runs/{fan['run_id']}/children", headers=auth("viewer"))
    assert viewer.status_code == 200
    worker = client.get(f"/runs/{fan['run_id']}/children", headers=auth("worker"))
    assert worker.status_code == 403
    other = client.get(f"/runs/{fan['run_id']}/children", headers=auth(tenant="other"))
    assert other.status_code == 404
    assert other.json()["code"] == "not_found"
    assert children(client, "no-such-run").status_code == 404
    assert children(client, fan["run_id"], limit=0).status_code == 422
    assert children(client, fan["run_id"], cursor="%%%").status_code == 422


@pytest.mark.spec("§3.3 hold-covers-descendants", "§7 legal-hold-409")
def test_a_child_run_through_a_legal_hold_and_erasure(client):
    top = start(client, "mid")
    ended(client, top["run_id"])
    child = only_child(client, top["run_id"])
    hold = client.post(
        "/v1/retention/legal-holds",
        json={"reason": "litigation", "run_id": top["run_id"]},
        headers=auth(),
    )
    assert hold.status_code == 201, hold.text
    for run_id in (child["run_id"], top["run_id"]):
        refused = client.post(
            "/v1/retention/erasure-requests",
            json={"run_id": run_id, "reason": "gdpr"},
            headers=auth(),
        )
        assert refused.status_code == 409, refused.text
    released = client.delete(f"/v1/retention/legal-holds/{hold.json()['hold_id']}", headers=auth())
    assert released.status_code == 200, released.text
    erased = client.post(
        "/v1/retention/erasure-requests",
        json={"run_id": top["run_id"], "reason": "gdpr"},
        headers=auth(),
    )
    assert erased.status_code == 200, erased.text
    assert {r["run_id"] for r in erased.json()["runs"]} == {top["run_id"], child["run_id"]}
    for run_id in (top["run_id"], child["run_id"]):
        entries = timeline(client, run_id)
        assert entries
        assert all(e["erased"] and e["input_snapshot"] is None for e in entries)
        assert verified(client, run_id)
