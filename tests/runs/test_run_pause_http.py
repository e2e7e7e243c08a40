"""Pausing over HTTP, against the e2e server on PostgreSQL (ADR 0076)."""

import time

import pytest
from tests.support.e2e import check, deploy, gated_action_graph, problem, start

pytestmark = [pytest.mark.e2e, pytest.mark.spec("C14 pause")]

REF = "gated"


def test_a_paused_deployment_queues_runs_until_it_is_unpaused(ecp_server, tenant, admin):
    deploy(admin, gated_action_graph(), REF)
    pause = f"/v1/deployments/{REF}/pause"
    for role in ("viewer", "approver", "analyst"):
        problem(ecp_server.caller(tenant, role).post(pause), 403, "forbidden")
    operator = ecp_server.caller(tenant, "operator")
    problem(operator.post(pause, json={"reason": ""}), 422, "validation_failed")
    paused = check(operator.post(pause), 200)  # no body: a reason is optional
    assert paused["paused"] is True
    assert check(admin.get(f"/v1/deployments/{REF}"), 200)["paused"] is True

    run = start(admin, REF)  # with Prefer: wait, a paused run is answered as settled
    assert run["status"] == "paused"

    assert check(operator.post(f"/v1/deployments/{REF}/unpause"), 200)["paused"] is False
    deadline = time.monotonic() + 20
    while check(admin.get(f"/runs/{run['run_id']}"), 200)["status"] != "waiting_approval":
        assert time.monotonic() < deadline, "the unpaused run was not dispatched"
        time.sleep(0.05)


def test_a_run_is_paused_and_unpaused_on_its_own(ecp_server, tenant, admin):
    deploy(admin, gated_action_graph(), REF)
    run = start(admin, REF)
    operator = ecp_server.caller(tenant, "operator")
    base = f"/runs/{run['run_id']}"
    paused = check(operator.post(f"{base}/pause", json={"reason": "look first"}), 200)
    assert paused["status"] == "waiting_approval"  # it waits for a person, paused or not
    assert check(operator.post(f"{base}/unpause"), 200)["status"] == "waiting_approval"
    problem(ecp_server.caller(tenant + "-other", "admin").post(f"{base}/pause"), 404)
    (approval_id,) = run["pending_approval_ids"]
    check(
        admin.post(
            f"/deployments/{REF}/approvals/{approval_id}/resolve", json={"decision": "reject"}
        ),
        200,
    )
    problem(operator.post(f"{base}/pause"), 409, "run_finished")


@pytest.mark.spec("C14 priority")
def test_a_start_takes_a_priority_of_0_to_9(admin):
    deploy(admin, gated_action_graph(), REF)
    for wrong in (10, -1, "high"):
        body = {"deployment_ref": REF, "priority": wrong}
        refused = problem(admin.post("/runs", json=body), 422)
        assert [error["loc"] for error in refused["errors"]] == [["priority"]]
    assert start(admin, REF, {"priority": 9})["priority"] == 9
    assert start(admin, REF)["priority"] == 5
