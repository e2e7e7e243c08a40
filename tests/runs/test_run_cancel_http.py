"""Canceling runs over HTTP and the command line, against the e2e server on PostgreSQL (ADR 0074).

``POST /runs/{run_id}/cancel`` is for admins and operators; its reason is required; the run's
approval is withdrawn, its task too, and the service refuses what comes after each.
"""

import json
import os
import pathlib
import subprocess
import sys
from typing import Any

import pytest
from tests.support.e2e import check, deploy, gated_action_graph, problem, start

pytestmark = pytest.mark.e2e

ECP = pathlib.Path(sys.executable).with_name("ecp")
COMMAND = [str(ECP)] if ECP.exists() else [sys.executable, "-m", "ecp_http.cli"]
REF = "gated"
TASKS_REF = "packing"
WHY = {"reason": "started by mistake"}


def packing_graph() -> dict[str, Any]:
    """``pack`` (a task of topic ``packing.pack``) → ``done``."""
    return {
        "graph_id": "packing",
        "entry": "pack",
        "nodes": [
            {
                "id": "pack",
                "kind": "task",
                "action": {"name": "packing.pack", "fingerprint": "pack/1"},
            },
            {"id": "done", "kind": "end"},
        ],
        "edges": [{"source": "pack", "target": "done"}],
    }


@pytest.mark.spec("C14 cancel", "C14 cancel-cascade")
def test_an_operator_cancels_a_waiting_run_and_its_approval_is_withdrawn(ecp_server, tenant, admin):
    deploy(admin, gated_action_graph(), REF)
    run = start(admin, REF)
    (approval_id,) = run["pending_approval_ids"]
    cancel = f"/runs/{run['run_id']}/cancel"
    for role in ("viewer", "approver", "analyst", "worker"):
        problem(ecp_server.caller(tenant, role).post(cancel, json=WHY), 403, "forbidden")
    operator = ecp_server.caller(tenant, "operator", subject="ops@example.com")

    missing = problem(operator.post(cancel, json={}), 422, "validation_failed")
    assert [error["loc"] for error in missing["errors"]] == [["reason"]]
    too_long = problem(operator.post(cancel, json={"reason": "x" * 501}), 422)
    assert [error["loc"] for error in too_long["errors"]] == [["reason"]]
    assert check(operator.get(f"/runs/{run['run_id']}"), 200)["status"] == "waiting_approval"

    canceled = check(operator.post(cancel, json=WHY), 200)
    assert canceled["status"] == "canceled"
    assert canceled["pending_approval_ids"] == []
    assert check(operator.post(cancel, json={"reason": "again"}), 200) == canceled
    other = ecp_server.caller(tenant + "-other", "admin")
    problem(other.post(cancel, json=WHY), 404, "not_found")

    timeline = check(operator.get(f"/runs/{run['run_id']}/timeline"), 200)["entries"]
    assert [entry["status"] for entry in timeline][-1] == "canceled"
    last = timeline[-1]
    assert last["input_snapshot"] == WHY
    assert last["execution_metadata"]["actor"]["subject"] == "ops@example.com"
    verified = check(operator.get(f"/runs/{run['run_id']}/audit/verify"), 200)
    assert verified["verified"] is True
    assert verified["signature_verified"] is True

    approval = check(admin.get(f"/v1/approvals/{approval_id}"), 200)
    assert approval["status"] == "withdrawn"
    resolve = f"/deployments/{REF}/approvals/{approval_id}/resolve"
    problem(admin.post(resolve, json={"decision": "approve"}), 409, "approval_withdrawn")


@pytest.mark.spec("C14 cancel")
def test_a_run_that_ended_refuses_to_be_canceled(admin):
    deploy(admin, gated_action_graph(), REF)
    run = start(admin, REF)
    (approval_id,) = run["pending_approval_ids"]
    resolve = f"/deployments/{REF}/approvals/{approval_id}/resolve"
    check(admin.post(resolve, json={"decision": "reject", "reason": "no"}), 200)
    problem(admin.post(f"/runs/{run['run_id']}/cancel", json=WHY), 409, "run_finished")


@pytest.mark.spec("C14 cancel-cascade")
def test_a_canceled_runs_task_refuses_its_worker(ecp_server, tenant, admin):
    deploy(admin, packing_graph(), TASKS_REF)
    run = start(admin, TASKS_REF)
    assert run["status"] == "waiting_task"
    worker = ecp_server.caller(tenant, "worker")
    claim = {"worker_id": "w1", "topics": ["packing.pack"]}
    (task,) = check(worker.post("/v1/tasks/claim", json=claim), 200)["tasks"]

    check(admin.post(f"/runs/{run['run_id']}/cancel", json=WHY), 200)

    lock = {"lock_token": task["lock_token"]}
    base = f"/v1/tasks/{task['task_id']}"
    problem(worker.post(f"{base}/heartbeat", json=lock), 409, "run_canceled")
    problem(worker.post(f"{base}/complete", json={**lock, "output": {}}), 409, "run_canceled")
    problem(worker.post(f"{base}/fail", json={**lock, "error": "late"}), 409, "run_canceled")
    assert check(worker.post("/v1/tasks/claim", json=claim), 200)["tasks"] == []
    assert check(admin.get(f"/v1/tasks/{task['task_id']}"), 200)["status"] == "withdrawn"
    assert check(admin.get(f"/runs/{run['run_id']}"), 200)["status"] == "canceled"


@pytest.mark.spec("C14 cancel")
def test_ecp_runs_cancel_cancels_over_the_api(ecp_server, tenant, admin):
    deploy(admin, gated_action_graph(), REF)
    run = start(admin, REF)
    env = {"ECP_URL": ecp_server.base_url, "ECP_TOKEN": ecp_server.token(tenant, "operator")}
    clean = {key: value for key, value in os.environ.items() if not key.startswith("ECP_")}

    def ecp(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*COMMAND, *args],
            env={**clean, **env},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    refused = ecp("runs", "cancel", run["run_id"])
    assert refused.returncode == 2
    assert "--reason" in refused.stderr
    done = ecp("runs", "cancel", run["run_id"], "--reason", "wrong order", "--format", "json")
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout)["status"] == "canceled"
    shown = ecp("runs", "cancel", run["run_id"], "--reason", "again")
    assert shown.returncode == 0
    assert ["status", "canceled"] in [line.split() for line in shown.stdout.splitlines()]
