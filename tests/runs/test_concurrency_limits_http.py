"""Concurrency limits over HTTP, against the e2e server on PostgreSQL (ADR 0079)."""

import pytest
from tests.support.e2e import check, deploy, gated_action_graph, problem, start

pytestmark = [pytest.mark.e2e, pytest.mark.spec("C14 limits")]

REF = "gated"
WRONG = [0, -1, 2.5, "3", True, 100_001, [], {}]
"""Not an integer from 1 to 100,000 (nor null)."""


@pytest.mark.spec("C14 limits-bad-input")
def test_a_limit_that_is_not_1_to_100000_is_422_at_its_field_and_nothing_is_written(admin):
    deploy(admin, gated_action_graph(), REF)
    deployment_limits = f"/v1/deployments/{REF}/limits"
    assert (
        check(admin.put(deployment_limits, json={"max_concurrent_runs": 3}), 200)[
            "max_concurrent_runs"
        ]
        == 3
    )
    assert check(admin.put("/v1/limits", json={"max_concurrent_runs": 7}), 200) == {
        "max_concurrent_runs": 7
    }
    for wrong in WRONG:
        for path in (deployment_limits, "/v1/limits"):
            refused = problem(admin.put(path, json={"max_concurrent_runs": wrong}), 422)
            assert refused["code"] == "validation_failed"
            assert [error["loc"] for error in refused["errors"]] == [["max_concurrent_runs"]]
        body = {"deployment_ref": "another", "graph_id": "gated", "max_concurrent_runs": wrong}
        refused = problem(admin.post("/v1/deployments", json=body), 422, "validation_failed")
        assert [error["loc"] for error in refused["errors"]] == [["max_concurrent_runs"]]
    for path in (deployment_limits, "/v1/limits"):
        missing = problem(admin.put(path, json={}), 422, "validation_failed")
        assert [error["loc"] for error in missing["errors"]] == [["max_concurrent_runs"]]
    # Nothing was written: the limits stand, the refused deployment was not made.
    assert check(admin.get(f"/v1/deployments/{REF}"), 200)["max_concurrent_runs"] == 3
    assert check(admin.get("/v1/limits"), 200) == {"max_concurrent_runs": 7}
    problem(admin.get("/v1/deployments/another"), 404)


def test_who_may_set_limits_and_a_limit_is_lifted_with_null(ecp_server, tenant, admin):
    deploy(admin, gated_action_graph(), REF)
    path = f"/v1/deployments/{REF}/limits"
    for role in ("viewer", "approver", "analyst"):
        caller = ecp_server.caller(tenant, role)
        problem(caller.put(path, json={"max_concurrent_runs": 2}), 403, "forbidden")
        problem(caller.get("/v1/limits"), 403, "forbidden")
    operator = ecp_server.caller(tenant, "operator")
    assert (
        check(operator.put(path, json={"max_concurrent_runs": 2}), 200)["max_concurrent_runs"] == 2
    )
    problem(operator.put("/v1/limits", json={"max_concurrent_runs": 2}), 403, "forbidden")
    assert check(operator.get("/v1/limits"), 200) == {"max_concurrent_runs": None}
    assert (
        check(operator.put(path, json={"max_concurrent_runs": None}), 200)["max_concurrent_runs"]
        is None
    )
    other = ecp_server.caller(tenant + "-other", "admin")
    problem(other.put(path, json={"max_concurrent_runs": 2}), 404)
    problem(admin.put("/v1/deployments/nope/limits", json={"max_concurrent_runs": 2}), 404)


def test_a_deployment_made_with_a_limit_runs_its_runs_and_a_repeat_must_not_name_another(admin):
    graph = gated_action_graph()
    check(admin.post("/v1/graphs", json=graph), 201)
    body = {"deployment_ref": REF, "graph_id": graph["graph_id"], "max_concurrent_runs": 1}
    assert check(admin.post("/v1/deployments", json=body), 201)["max_concurrent_runs"] == 1
    assert check(admin.post("/v1/deployments", json=body), 200)["max_concurrent_runs"] == 1
    problem(admin.post("/v1/deployments", json={**body, "max_concurrent_runs": 2}), 409)
    unnamed = {"deployment_ref": REF, "graph_id": graph["graph_id"]}  # names no limit: matches
    assert check(admin.post("/v1/deployments", json=unnamed), 200)["max_concurrent_runs"] == 1
    # A run waiting for a person does not count: each reaches its approval in turn.
    runs = [start(admin, REF) for _ in range(3)]
    assert {run["status"] for run in runs} == {"waiting_approval"}
