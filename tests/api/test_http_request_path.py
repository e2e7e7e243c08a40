"""The request path's shortcuts, served (ADR 0064): metric series kept between requests still
count each request under its own labels; a remembered token still answers 401 once refused."""

import base64
from collections.abc import Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families
from starlette.testclient import TestClient

from ecp_core.demo import EXAMPLE_GRAPH
from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration

SECRET = "p" * 40


@pytest.fixture
def client(fresh_database) -> Iterator[TestClient]:
    settings = Settings(
        database_url=fresh_database,
        jwt_secret=SECRET,
        audit_signing_key=base64.b64encode(bytes(range(9, 41))).decode(),
        scheduler_enabled=False,
    )
    with TestClient(create_app(settings, start_workers=False)) as test_client:
        yield test_client


def counted(client: TestClient) -> dict[tuple[str, str], float]:
    """``ecp_http_requests`` of ``GET /runs/{run_id}`` by status, and its histogram's count."""
    found = {}
    for family in text_string_to_metric_families(client.get("/metrics").text):
        for s in family.samples:
            if s.labels.get("route") != "/runs/{run_id}":
                continue
            if s.name == "ecp_http_requests_total":
                found["status", s.labels["status"]] = s.value
            elif s.name == "ecp_http_request_duration_seconds_count":
                found["observed", s.labels["method"]] = s.value
    return found


@pytest.mark.spec("C8 metrics")
def test_each_request_is_counted_under_its_own_labels(client):
    headers = {"Authorization": f"Bearer {mint_token(SECRET, tenant='t', roles=['admin'])}"}
    assert client.post("/v1/graphs", json=EXAMPLE_GRAPH, headers=headers).status_code == 201
    body = {"deployment_ref": "refunds", "graph_id": EXAMPLE_GRAPH["graph_id"]}
    assert client.post("/v1/deployments", json=body, headers=headers).status_code == 201
    started = client.post(
        "/runs", json={"deployment_ref": "refunds", "input": {"order": "A-1"}}, headers=headers
    )
    run_id = started.json()["run_id"]
    statuses = [client.get(f"/runs/{run_id}", headers=headers).status_code for _ in range(3)]
    statuses += [client.get("/runs/no-such-run", headers=headers).status_code for _ in range(2)]
    statuses.append(client.get(f"/runs/{run_id}").status_code)
    assert statuses == [200, 200, 200, 404, 404, 401]
    assert counted(client) == {
        ("status", "200"): 3,
        ("status", "404"): 2,
        ("status", "401"): 1,
        ("observed", "GET"): 6,
    }


@pytest.mark.spec("C2 bearer-jwt", "§5 tenant-isolation")
def test_a_remembered_token_reads_only_its_tenant(client):
    def headers(tenant: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {mint_token(SECRET, tenant=tenant, roles=['admin'])}"}

    ours, theirs = headers("ours"), headers("theirs")
    assert client.post("/v1/graphs", json=EXAMPLE_GRAPH, headers=ours).status_code == 201
    body = {"deployment_ref": "refunds", "graph_id": EXAMPLE_GRAPH["graph_id"]}
    assert client.post("/v1/deployments", json=body, headers=ours).status_code == 201
    started = client.post(
        "/runs", json={"deployment_ref": "refunds", "input": {"order": "A-1"}}, headers=ours
    )
    run_id = started.json()["run_id"]
    for _ in range(2):  # the second time, both tokens are remembered
        assert client.get(f"/runs/{run_id}", headers=ours).status_code == 200
        assert client.get(f"/runs/{run_id}", headers=theirs).status_code == 404
