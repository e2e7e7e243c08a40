"""Graph templates over HTTP: create, versions, list, instantiate, run (ADR 0045).

On the memory store; one path through PostgreSQL at the end.
"""

import base64
import copy
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from ecp_core.memory import MemoryStore
from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration

SECRET = "t" * 40
SEED = base64.b64encode(bytes(range(3, 35))).decode("ascii")

TEMPLATE: dict[str, Any] = {
    "name": "refund-triage",
    "description": "Classify, then end",
    "parameters": {
        "type": "object",
        "properties": {
            "category": {"type": "string", "default": "refund"},
            "limit": {"type": "number", "exclusiveMinimum": 0},
            "tags": {"type": "array", "items": {"type": "string"}, "default": []},
        },
        "required": ["limit"],
    },
    "graph": {
        "entry": "classify",
        "nodes": [
            {
                "id": "classify",
                "kind": "action",
                "action": {
                    "name": "set",
                    "fingerprint": "set/1",
                    "arguments": {
                        "values": {
                            "category": {"$param": "category"},
                            "limit": {"$param": "limit"},
                            "tags": {"$param": "tags"},
                            "marker": {"$literal": {"$param": "category"}},
                        }
                    },
                },
            },
            {"id": "done", "kind": "end"},
        ],
        "edges": [{"source": "classify", "target": "done"}],
    },
}


def auth(role: str = "admin", tenant: str = "acme") -> dict[str, str]:
    return {"Authorization": f"Bearer {mint_token(SECRET, tenant=tenant, roles=[role])}"}


def settings(**values: Any) -> Settings:
    return Settings(jwt_secret=SECRET, audit_signing_key=SEED, dispatch_poll_seconds=0.02, **values)


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(create_app(settings(), storage=MemoryStore())) as test_client:
        yield test_client


def problem(answer: Any, status: int = 422) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"] == "application/problem+json"
    return answer.json()


def changed(**fields: Any) -> dict[str, Any]:
    body = copy.deepcopy(TEMPLATE)
    body.update(fields)
    return body


@pytest.mark.spec("§2.1 create-template", "C1 list-paging")
def test_create_repeat_bump_read_and_list(client: TestClient) -> None:
    first = client.post("/v1/templates", json=TEMPLATE, headers=auth("operator"))
    assert first.status_code == 201, first.text
    assert (first.json()["name"], first.json()["version"]) == ("refund-triage", 1)
    repeat = client.post("/v1/templates", json=TEMPLATE, headers=auth())
    assert (repeat.status_code, repeat.json()) == (200, first.json())
    bumped = client.post("/v1/templates", json=changed(description="Again"), headers=auth())
    assert (bumped.status_code, bumped.json()["version"]) == (201, 2)
    latest = client.get("/v1/templates/refund-triage", headers=auth("viewer"))
    assert latest.json() == bumped.json()
    one = client.get("/v1/templates/refund-triage/versions/1", headers=auth("viewer"))
    assert one.json() == first.json()
    assert one.json()["graph"] == TEMPLATE["graph"]  # holes and literals kept as written
    for version in ("3", "0", "x", "1.0", "99999999999999999999"):
        path = f"/v1/templates/refund-triage/versions/{version}"
        assert problem(client.get(path, headers=auth()), 404)["code"] == "not_found"
    client.post("/v1/templates", json=changed(name="a-first"), headers=auth())
    page = client.get("/v1/templates?limit=1", headers=auth())
    assert [t["name"] for t in page.json()["templates"]] == ["a-first"]
    assert 'rel="next"' in page.headers["link"]
    rest = client.get(f"/v1/templates?limit=1&cursor={page.json()['next_cursor']}", headers=auth())
    assert [(t["name"], t["version"]) for t in rest.json()["templates"]] == [("refund-triage", 2)]
    assert rest.json()["next_cursor"] is None


@pytest.mark.spec("§2.1 instantiate-template", "C3 graph-registration")
def test_instantiate_then_run_to_completion(client: TestClient) -> None:
    assert client.post("/v1/templates", json=TEMPLATE, headers=auth()).status_code == 201
    body = {"graph_id": "triage", "arguments": {"limit": 12.5, "tags": ["vip"]}}
    made = client.post(
        "/v1/templates/refund-triage/instantiate", json=body, headers=auth("operator")
    )
    assert made.status_code == 201, made.text
    answer = made.json()
    assert (answer["graph_id"], answer["version"], answer["created"]) == ("triage", 1, True)
    assert answer["template"]["name"] == "refund-triage"
    assert answer["template"]["version"] == 1
    assert answer["template"]["arguments_digest"].startswith("sha256:")
    again = client.post("/v1/templates/refund-triage/instantiate", json=body, headers=auth())
    assert again.status_code == 200
    assert again.json() == {**answer, "created": False}
    graph = client.get("/v1/graphs/triage", headers=auth()).json()
    assert graph["digest"] == answer["digest"]
    # The same graph posted directly is the same version: instantiation is registration.
    direct = client.post("/v1/graphs", json=graph["definition"], headers=auth())
    assert (direct.status_code, direct.json()["version"]) == (200, 1)
    deployed = client.post(
        "/v1/deployments", json={"deployment_ref": "triage", "graph_id": "triage"}, headers=auth()
    )
    assert deployed.status_code == 201, deployed.text
    run = client.post(
        "/runs",
        json={"deployment_ref": "triage", "input": {}},
        headers={**auth(), "Prefer": "wait=30"},
    )
    assert run.status_code == 201, run.text
    assert run.json()["status"] == "completed"
    assert run.json()["output"] == {
        "category": "refund",
        "limit": 12.5,
        "tags": ["vip"],
        "marker": {"$param": "category"},
    }


@pytest.mark.spec("§2.1 create-template", "§7 no-extras")
@pytest.mark.parametrize(
    ("fields", "loc"),
    [
        ({"parameters": {"type": "object", "properties": 3}}, ["parameters", "properties"]),
        ({"parameters": {"type": "string"}}, ["parameters", "type"]),
        ({"name": "has space"}, ["name"]),
        ({"graph": {**TEMPLATE["graph"], "entry": {"$param": "nobody"}}}, ["graph", "entry"]),
        ({"graph": {**TEMPLATE["graph"], "graph_id": "x"}}, ["graph", "graph_id"]),
        ({"owner": "me"}, ["owner"]),
        (
            {"parameters": {"type": "object", "properties": {"a": {"$ref": "https://x.test/s"}}}},
            ["parameters", "properties", "a", "$ref"],
        ),
    ],
)
def test_a_bad_template_is_a_located_problem_and_nothing_is_stored(
    client: TestClient, fields: dict[str, Any], loc: list[Any]
) -> None:
    answer = problem(client.post("/v1/templates", json=changed(**fields), headers=auth()))
    assert loc in [error["loc"] for error in answer["errors"]]
    assert client.get("/v1/templates", headers=auth()).json()["templates"] == []


@pytest.mark.spec("§2.1 instantiate-template", "§7 no-extras")
@pytest.mark.parametrize(
    ("body", "loc"),
    [
        ({"graph_id": "g", "arguments": {"limit": 0}}, ["arguments", "limit"]),
        ({"graph_id": "g", "arguments": {"limit": 1, "tags": [1]}}, ["arguments", "tags", 0]),
        ({"graph_id": "g", "arguments": {"limit": 1, "typo": 1}}, ["arguments", "typo"]),
        ({"graph_id": "g", "arguments": {}}, ["arguments"]),
        ({"graph_id": "not an id", "arguments": {"limit": 1}}, ["graph_id"]),
        ({"graph_id": "g", "arguments": {"limit": 1}, "extra": 1}, ["extra"]),
    ],
)
def test_bad_arguments_are_a_located_problem_and_no_graph_is_registered(
    client: TestClient, body: dict[str, Any], loc: list[Any]
) -> None:
    assert client.post("/v1/templates", json=TEMPLATE, headers=auth()).status_code == 201
    path = "/v1/templates/refund-triage/instantiate"
    answer = problem(client.post(path, json=body, headers=auth()))
    assert loc in [error["loc"] for error in answer["errors"]]
    assert client.get("/v1/graphs", headers=auth()).json()["graphs"] == []


@pytest.mark.spec("§2.1 instantiate-template", "C10 action-plugins")
def test_an_instantiated_graph_naming_an_unknown_action_is_refused(client: TestClient) -> None:
    unknown = copy.deepcopy(TEMPLATE)
    unknown["graph"]["nodes"][0]["action"]["name"] = "no-such-action"
    assert client.post("/v1/templates", json=unknown, headers=auth()).status_code == 201
    path = "/v1/templates/refund-triage/instantiate"
    answer = problem(
        client.post(path, json={"graph_id": "g", "arguments": {"limit": 1}}, headers=auth())
    )
    assert answer["code"] == "unknown_action"
    assert answer["errors"][0]["loc"][:2] == ["graph", "nodes"]


@pytest.mark.spec("§5 tenant-isolation", "C1 status-codes")
def test_roles_and_tenants(client: TestClient) -> None:
    assert client.post("/v1/templates", json=TEMPLATE, headers=auth("viewer")).status_code == 403
    assert client.post("/v1/templates", json=TEMPLATE, headers=auth("analyst")).status_code == 403
    assert client.post("/v1/templates", json=TEMPLATE, headers=auth("operator")).status_code == 201
    assert client.get("/v1/templates", headers=auth("worker")).status_code == 403
    assert client.get("/v1/templates").status_code == 401
    body = {"graph_id": "g", "arguments": {"limit": 1}}
    path = "/v1/templates/refund-triage/instantiate"
    assert client.post(path, json=body, headers=auth("viewer")).status_code == 403
    other = auth(tenant="globex")
    assert problem(client.get("/v1/templates/refund-triage", headers=other), 404)
    assert problem(client.get("/v1/templates/refund-triage/versions/1", headers=other), 404)
    assert problem(client.post(path, json=body, headers=other), 404)
    assert client.get("/v1/templates", headers=other).json()["templates"] == []
    assert client.get("/v1/graphs", headers=other).json()["graphs"] == []


@pytest.mark.spec("§2.1 instantiate-template", "C1 openapi")
def test_the_routes_are_in_the_openapi_document(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert set(paths["/v1/templates"]) == {"get", "post"}
    assert "get" in paths["/v1/templates/{name}/versions/{version}"]
    instantiate = paths["/v1/templates/{name}/instantiate"]["post"]
    assert {"200", "201", "404", "422"} <= set(instantiate["responses"])
    assert "graph_write" in instantiate["description"]


@pytest.mark.spec("§2.1 instantiate-template")
def test_create_and_instantiate_on_postgres(fresh_database: str) -> None:
    with TestClient(create_app(settings(database_url=fresh_database))) as client:
        assert client.post("/v1/templates", json=TEMPLATE, headers=auth()).status_code == 201
        assert client.post("/v1/templates", json=TEMPLATE, headers=auth()).status_code == 200
        stored = client.get("/v1/templates/refund-triage", headers=auth()).json()
        assert stored["graph"] == TEMPLATE["graph"]
        body = {"graph_id": "triage", "arguments": {"limit": 1e16}}
        path = "/v1/templates/refund-triage/instantiate"
        made = client.post(path, json=body, headers=auth())
        assert made.status_code == 201, made.text
        assert client.post(path, json=body, headers=auth()).json()["created"] is False
        client.post(
            "/v1/deployments", json={"deployment_ref": "d", "graph_id": "triage"}, headers=auth()
        )
        run = client.post(
            "/runs",
            json={"deployment_ref": "d", "input": {}},
            headers={**auth(), "Prefer": "wait=30"},
        )
        assert run.json()["status"] == "completed", run.text
        assert run.json()["output"]["limit"] == 1e16
