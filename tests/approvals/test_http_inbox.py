"""The approver inbox and the catalogue listings over HTTP, on the memory store.

``GET /v1/approvals`` (filters, pages, roles, tenants), ``GET /v1/approvals/{id}``,
``GET /v1/graphs``, ``GET /v1/graphs/{graph_id}/versions`` and ``GET /v1/deployments``.
"""

import base64
import copy
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from ecp_core.demo import EXAMPLE_GRAPH
from ecp_core.memory import MemoryStore
from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration

SECRET = "i" * 40
SEED = base64.b64encode(bytes(range(7, 39))).decode("ascii")
GRAPH_ID = EXAMPLE_GRAPH["graph_id"]


def auth(role: str = "admin", tenant: str = "acme") -> dict[str, str]:
    return {"Authorization": f"Bearer {mint_token(SECRET, tenant=tenant, roles=[role])}"}


def start(client: TestClient, ref: str, tenant: str = "acme") -> dict:
    answer = client.post(
        "/runs",
        json={"deployment_ref": ref, "input": {"order": "A-1"}},
        headers={**auth(tenant=tenant), "Prefer": "wait=30"},
    )
    assert answer.status_code == 201, answer.text
    run = answer.json()
    assert run["status"] == "waiting_approval"
    return run


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[TestClient, list[dict]]]:
    """Two deployments of acme with four waiting runs (one approval resolved), one of globex."""
    settings = Settings(jwt_secret=SECRET, audit_signing_key=SEED, dispatch_poll_seconds=0.02)
    with TestClient(create_app(settings, storage=MemoryStore())) as test_client:
        for tenant in ("acme", "globex"):
            graph = test_client.post("/v1/graphs", json=EXAMPLE_GRAPH, headers=auth(tenant=tenant))
            assert graph.status_code == 201, graph.text
        changed = copy.deepcopy(EXAMPLE_GRAPH)
        changed["nodes"][1]["summary"] = "Approve the refund, again"
        assert test_client.post("/v1/graphs", json=changed, headers=auth()).status_code == 201
        for ref, version in (("refunds", 1), ("returns", 2)):
            body = {"deployment_ref": ref, "graph_id": GRAPH_ID, "graph_version": version}
            assert test_client.post("/v1/deployments", json=body, headers=auth()).status_code == 201
        body = {"deployment_ref": "refunds", "graph_id": GRAPH_ID}
        assert (
            test_client.post("/v1/deployments", json=body, headers=auth(tenant="globex"))
        ).status_code == 201
        runs = [start(test_client, ref) for ref in ("refunds", "refunds", "returns", "returns")]
        start(test_client, "refunds", tenant="globex")
        first = runs[0]["pending_approval_ids"][0]
        resolved = test_client.post(
            f"/deployments/refunds/approvals/{first}/resolve",
            json={"decision": "approve"},
            headers=auth("approver"),
        )
        assert resolved.status_code == 200, resolved.text
        yield test_client, runs


@pytest.fixture
def client(served) -> TestClient:
    return served[0]


@pytest.fixture
def runs(served) -> list[dict]:
    """acme's runs: two of ``refunds`` (the first one's approval resolved), two of ``returns``."""
    return served[1]


def ids(answer) -> list[str]:
    assert answer.status_code == 200, answer.text
    return [a["approval_id"] for a in answer.json()["approvals"]]


@pytest.mark.spec("C10 approver-inbox", "§5 tenant-isolation")
def test_an_approver_sees_the_pending_approvals_of_the_own_tenant_only(client, runs):
    pending = ids(client.get("/v1/approvals?status=pending", headers=auth("approver")))
    assert pending == sorted(run["pending_approval_ids"][0] for run in runs[1:])
    everything = ids(client.get("/v1/approvals", headers=auth("approver")))
    assert everything == sorted(run["pending_approval_ids"][0] for run in runs)
    theirs = ids(client.get("/v1/approvals", headers=auth("approver", tenant="globex")))
    assert len(theirs) == 1
    assert not set(theirs) & set(everything)
    other = client.get(f"/v1/approvals/{theirs[0]}", headers=auth("approver"))
    assert other.status_code == 404
    assert other.headers["content-type"] == "application/problem+json"
    own = client.get(f"/v1/approvals/{everything[0]}", headers=auth("approver"))
    assert own.status_code == 200
    assert own.json()["status"] == "resolved"
    assert own.json()["run_id"] == runs[0]["run_id"]


@pytest.mark.spec("C10 approver-inbox", "C1 status-codes")
@pytest.mark.parametrize(
    ("role", "status"),
    [("admin", 200), ("operator", 200), ("approver", 200), ("viewer", 403), ("analyst", 403)],
)
def test_the_inbox_is_for_admins_operators_and_approvers(client, role, status, runs):
    assert client.get("/v1/approvals", headers=auth(role)).status_code == status
    listed = client.get("/v1/approvals", headers=auth()).json()["approvals"][0]
    one = client.get(f"/v1/approvals/{listed['approval_id']}", headers=auth(role))
    assert one.status_code == status
    if status == 403:
        assert one.json()["code"] == "forbidden"
    assert client.get("/v1/approvals").status_code == 401


@pytest.mark.spec("C10 approver-inbox")
def test_the_inbox_filters_by_status_deployment_and_run(client, runs):
    returns = sorted(run["pending_approval_ids"][0] for run in runs[2:])
    assert ids(client.get("/v1/approvals?deployment_ref=returns", headers=auth())) == returns
    one_run = client.get(f"/v1/approvals?run_id={runs[1]['run_id']}", headers=auth())
    assert ids(one_run) == runs[1]["pending_approval_ids"]
    resolved = client.get("/v1/approvals?status=resolved&deployment_ref=refunds", headers=auth())
    assert ids(resolved) == runs[0]["pending_approval_ids"]
    assert ids(client.get("/v1/approvals?status=escalated", headers=auth())) == []
    assert ids(client.get("/v1/approvals?deployment_ref=nowhere", headers=auth())) == []
    bad = client.get("/v1/approvals?status=open&deployment_ref=", headers=auth())
    assert bad.status_code == 422
    assert client.get("/v1/approvals?owner=me", headers=auth()).json()["code"] == (
        "unknown_parameter"
    )


def page_through(client, path: str, key: str, limit: int) -> list[dict]:
    """Every item of a listing, following ``next_cursor`` and checking the ``Link`` header."""
    items: list[dict] = []
    answer = client.get(f"{path}{'&' if '?' in path else '?'}limit={limit}", headers=auth())
    while True:
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert len(body[key]) <= limit
        items.extend(body[key])
        if body["next_cursor"] is None:
            assert "link" not in answer.headers
            return items
        assert 'rel="next"' in answer.headers["link"]
        next_path = answer.headers["link"].split(">")[0].lstrip("<")
        assert f"cursor={body['next_cursor']}" in next_path
        answer = client.get(next_path, headers=auth())


@pytest.mark.spec("C10 approver-inbox", "C1 list-paging")
def test_every_listing_pages_by_limit_and_cursor(client, runs):
    everything = ids(client.get("/v1/approvals", headers=auth()))
    paged = page_through(client, "/v1/approvals", "approvals", 1)
    assert [a["approval_id"] for a in paged] == everything
    pending = page_through(client, "/v1/approvals?status=pending", "approvals", 2)
    assert [a["approval_id"] for a in pending] == everything[1:]
    versions = page_through(client, f"/v1/graphs/{GRAPH_ID}/versions", "versions", 1)
    assert [(v["graph_id"], v["version"]) for v in versions] == [(GRAPH_ID, 1), (GRAPH_ID, 2)]
    deployments = page_through(client, "/v1/deployments", "deployments", 1)
    assert [d["deployment_ref"] for d in deployments] == ["refunds", "returns"]
    assert [d["graph_version_ref"] for d in deployments] == [f"{GRAPH_ID}@1", f"{GRAPH_ID}@2"]
    bad = client.get("/v1/approvals?cursor=not-ours", headers=auth())
    assert bad.status_code == 422
    assert bad.json()["errors"] == [{"loc": ["cursor"], "msg": "not a cursor this service issued"}]
    graphs_cursor = client.get("/v1/deployments?limit=1", headers=auth()).json()["next_cursor"]
    mixed = client.get(f"/v1/approvals?cursor={graphs_cursor}", headers=auth())
    assert mixed.status_code == 422
    versions_cursor = client.get(f"/v1/graphs/{GRAPH_ID}/versions?limit=1", headers=auth()).json()[
        "next_cursor"
    ]
    other_graph = client.get(f"/v1/graphs/other/versions?cursor={versions_cursor}", headers=auth())
    assert other_graph.status_code == 422


@pytest.mark.spec("C10 approver-inbox", "§5 tenant-isolation")
def test_graphs_list_the_latest_version_of_each_graph_per_tenant(client, runs):
    graphs = client.get("/v1/graphs", headers=auth("viewer"))
    assert graphs.status_code == 200, graphs.text
    [latest] = graphs.json()["graphs"]
    assert (latest["graph_id"], latest["version"]) == (GRAPH_ID, 2)
    assert graphs.json()["next_cursor"] is None
    [theirs] = client.get("/v1/graphs", headers=auth(tenant="globex")).json()["graphs"]
    assert theirs["version"] == 1
    unknown = client.get("/v1/graphs/nope/versions", headers=auth())
    assert unknown.status_code == 404
    assert client.get("/v1/graphs", headers=auth(tenant="nobody")).json()["graphs"] == []
    theirs = client.get("/v1/deployments", headers=auth(tenant="globex")).json()["deployments"]
    assert [d["deployment_ref"] for d in theirs] == ["refunds"]
    assert client.get("/v1/graphs?limit=0", headers=auth()).status_code == 422
