"""Rollouts over HTTP: create, read, list, assign, weights, end, verify, and who may (ADR 0089)."""

from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.templates.test_http_templates import auth, problem, settings

from ecp_core.errors import JwtRequired
from ecp_core.identity import ActorIdentity
from ecp_core.memory import MemoryStore
from ecp_core.types import AuthMethod, ServiceRole
from ecp_http.server.handlers.rollouts import assign_unit
from ecp_http.server.routing import Call
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration


def graph(value: int) -> dict[str, Any]:
    """Graph ``canary`` whose one action sets ``v`` to ``value``."""
    values = {"v": value}
    return {
        "graph_id": "canary",
        "entry": "a",
        "nodes": [
            {
                "id": "a",
                "kind": "action",
                "action": {"name": "set", "fingerprint": "set/1", "arguments": {"values": values}},
            },
            {"id": "done", "kind": "end"},
        ],
        "edges": [{"source": "a", "target": "done"}],
    }


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(create_app(settings(), storage=MemoryStore())) as test_client:
        for value in (1, 2):
            made = test_client.post("/v1/graphs", json=graph(value), headers=auth())
            assert made.status_code == 201, made.text
        body = {"deployment_ref": "canary", "graph_id": "canary", "graph_version": 1}
        assert test_client.post("/v1/deployments", json=body, headers=auth()).status_code == 201
        yield test_client


CANARY = {
    "deployment_ref": "canary",
    "arms": [
        {"graph_version_ref": "canary@1", "weight": 90},
        {"graph_version_ref": "canary@2", "weight": 10},
    ],
    "unit": "subject",
}


@pytest.mark.spec("C17 rollout-create", "C1 list-paging", "§5 tenant-isolation")
def test_create_read_list_and_one_active_per_deployment(client: TestClient) -> None:
    made = client.post("/v1/rollouts", json=CANARY, headers=auth("operator"))
    assert made.status_code == 201, made.text
    rollout = made.json()
    assert rollout["method_version"] == "homogeneous-assignment-v1"
    assert [(a["index"], a["weight"]) for a in rollout["arms"]] == [(0, 90), (1, 10)]
    assert (rollout["status"], rollout["unit"], rollout["period"]) == ("active", "subject", 1)
    assert "key" not in rollout
    assert all("buckets" not in arm for arm in rollout["arms"])
    path = f"/v1/rollouts/{rollout['rollout_id']}"
    assert client.get(path, headers=auth("viewer")).json() == rollout
    assert problem(client.get(path, headers=auth(tenant="other")), 404)["code"] == "not_found"
    again = client.post("/v1/rollouts", json=CANARY, headers=auth())
    assert problem(again, 409)["code"] == "conflict"
    listed = client.get("/v1/rollouts?limit=1", headers=auth("viewer")).json()
    assert listed == {"rollouts": [rollout], "next_cursor": None}


@pytest.mark.spec("C17 rollout-create")
@pytest.mark.parametrize(
    ("change", "loc"),
    [
        ({"arms": [{"graph_version_ref": "canary@1", "weight": 90}]}, ["arms"]),
        ({"arms": [{"graph_version_ref": "canary@1", "weight": 101}]}, ["arms", 0, "weight"]),
        ({"arms": [{"graph_version_ref": "canary@1", "weight": -1}]}, ["arms", 0, "weight"]),
        ({"arms": [{"graph_version_ref": "canary@3", "weight": 100}]}, None),
        ({"arms": [{"graph_version_ref": "canary@99999999999", "weight": 100}]}, None),
        ({"arms": [{"graph_version_ref": "canary", "weight": 100}]}, None),
        ({"arms": []}, ["arms"]),
        ({"arms": [CANARY["arms"][0], {**CANARY["arms"][0], "weight": 10}]}, ["arms"]),
        ({"unit": "tenant"}, ["unit"]),
    ],
)
def test_bad_arms_are_422_with_their_location(
    client: TestClient, change: dict[str, Any], loc: list[Any] | None
) -> None:
    answer = problem(client.post("/v1/rollouts", json={**CANARY, **change}, headers=auth()))
    assert answer["code"] == "validation_failed"
    if loc is not None:
        assert answer["errors"][0]["loc"][-len(loc) :] == loc


@pytest.mark.spec("C17 rollout-create")
def test_an_unknown_deployment_is_404(client: TestClient) -> None:
    body = {**CANARY, "deployment_ref": "nowhere"}
    assert (
        problem(client.post("/v1/rollouts", json=body, headers=auth()), 404)["code"] == "not_found"
    )


@pytest.mark.spec("C17 rollout-assign", "C17 rollout-consistent", "C17 rollout-verify")
def test_assign_is_stable_weights_change_consistently_and_verify_counts(
    client: TestClient,
) -> None:
    rollout_id = client.post("/v1/rollouts", json=CANARY, headers=auth()).json()["rollout_id"]
    path = f"/v1/rollouts/{rollout_id}"
    first = {}
    for n in range(300):
        got = client.post(f"{path}/assign", json={"unit_id": f"user-{n}"}, headers=auth("operator"))
        assert got.status_code == 200, got.text
        first[n] = got.json()
    again = client.post(f"{path}/assign", json={"unit_id": "user-7"}, headers=auth()).json()
    assert again == first[7]
    assert {a["graph_version_ref"] for a in first.values()} == {"canary@1", "canary@2"}
    report = client.get(f"{path}/verify", headers=auth("viewer")).json()
    assert report["method_version"] == "homogeneous-assignment-v1"
    assert sum(a["observed"] for a in report["arms"]) == 300
    assert [a["expected"] for a in report["arms"]] == [270.0, 30.0]
    assert report["homogeneous"] in (True, False)
    assert report["limitations"]
    weights = {"arms": [{**CANARY["arms"][0], "weight": 80}, {**CANARY["arms"][1], "weight": 20}]}
    changed = client.put(path, json=weights, headers=auth())
    assert changed.status_code == 200, changed.text
    assert changed.json()["period"] == 2
    for n, was in first.items():
        now = client.post(f"{path}/assign", json={"unit_id": f"user-{n}"}, headers=auth()).json()
        assert was["arm"] == 0 or now["arm"] == 1  # nobody leaves the arm that grew
    fresh = client.get(f"{path}/verify", headers=auth()).json()
    assert (fresh["period"], sum(a["observed"] for a in fresh["arms"])) == (2, 300)
    swapped = {"arms": list(reversed(weights["arms"]))}
    assert problem(client.put(path, json=swapped, headers=auth()))["code"] == "validation_failed"


@pytest.mark.spec("C17 rollout-end")
def test_end_promotes_an_arm_and_the_deployment_runs_it(client: TestClient) -> None:
    rollout_id = client.post("/v1/rollouts", json=CANARY, headers=auth()).json()["rollout_id"]
    path = f"/v1/rollouts/{rollout_id}"
    other = client.post(f"{path}/end", json={"graph_version_ref": "canary@3"}, headers=auth())
    assert problem(other)["code"] == "validation_failed"
    ended = client.post(f"{path}/end", json={"graph_version_ref": "canary@2"}, headers=auth())
    assert ended.status_code == 200, ended.text
    assert (ended.json()["status"], ended.json()["promoted_graph_version_ref"]) == (
        "ended",
        "canary@2",
    )
    deployment = client.get("/v1/deployments/canary", headers=auth()).json()
    assert deployment["graph_version_ref"] == "canary@2"
    run = client.post("/runs", json={"deployment_ref": "canary"}, headers=auth("operator"))
    assert run.json()["graph_version_ref"] == "canary@2"
    late = client.post(f"{path}/assign", json={"unit_id": "u"}, headers=auth())
    assert problem(late, 409)["code"] == "conflict"
    assert client.post("/v1/rollouts", json=CANARY, headers=auth()).status_code == 201


@pytest.mark.spec("C17 rollout-access")
def test_api_keys_and_browser_sessions_get_403_on_create_assign_and_verify(
    client: TestClient,
) -> None:
    made = client.post("/v1/api-keys", json={"name": "ci", "role": "admin"}, headers=auth())
    key = {"X-API-Key": made.json()["key"]}
    assert problem(client.post("/v1/rollouts", json=CANARY, headers=key), 403)["code"] == (
        "jwt_required"
    )
    rollout_id = client.post("/v1/rollouts", json=CANARY, headers=auth()).json()["rollout_id"]
    path = f"/v1/rollouts/{rollout_id}"
    assign = client.post(f"{path}/assign", json={"unit_id": "u"}, headers=key)
    assert problem(assign, 403)["code"] == "jwt_required"
    assert problem(client.get(f"{path}/verify", headers=key), 403)["code"] == "jwt_required"
    assert client.get(path, headers=key).status_code == 200  # reads are not restricted
    # A browser session's actor is a bearer, but its request carries the cookie, no JWT.
    session = ActorIdentity(
        subject="person",
        auth_method=AuthMethod.BEARER,
        roles=(ServiceRole.ADMIN,),
        tenant_id="acme",
    )
    call = Call(actor=session, path={"rollout_id": rollout_id}, headers={"cookie": "ecp_session=x"})
    with pytest.raises(JwtRequired):
        assign_unit(call, services=None)  # type: ignore[arg-type]
    assert (
        problem(client.post(f"{path}/assign", json={"unit_id": "u"}, headers=auth("viewer")), 403)[
            "code"
        ]
        == "forbidden"
    )


@pytest.mark.spec("C17 rollout-assign")
def test_a_run_started_under_a_rollout_shows_its_arm_and_a_subject_keeps_it(
    client: TestClient,
) -> None:
    rollout = client.post("/v1/rollouts", json=CANARY, headers=auth()).json()
    seen = {}
    for n in range(40):
        body = {"deployment_ref": "canary", "thread_id": f"customer-{n % 8}"}
        run = client.post("/runs", json=body, headers=auth("operator")).json()
        assert run["rollout_id"] == rollout["rollout_id"]
        assert run["graph_version_ref"] == rollout["arms"][run["arm"]]["graph_version_ref"]
        assert seen.setdefault(body["thread_id"], run["arm"]) == run["arm"]  # by subject
        read = client.get(f"/runs/{run['run_id']}", headers=auth()).json()
        assert (read["rollout_id"], read["arm"]) == (run["rollout_id"], run["arm"])
    counted = client.get(f"/v1/rollouts/{rollout['rollout_id']}/verify", headers=auth()).json()
    assert sum(a["observed"] for a in counted["arms"]) == 8  # one per subject
    assert counted["homogeneous"] is None  # below the minimum count
