"""Moving waiting runs over HTTP and with ``ecp runs migrate``, on the e2e server's PostgreSQL.

``POST /runs/{run_id}/migrate`` and ``POST /v1/runs/migrate`` are for admins and operators;
runs waiting at an approval move to version 2 and complete there, a run whose node version 2
lacks is refused with the reason and left as it was, and the chain verifies across the move.
"""

import json
import os
import pathlib
import subprocess
import sys
from typing import Any

import pytest
from tests.support.e2e import check, deploy, only_pending_approval, problem, start

pytestmark = pytest.mark.e2e

ECP = pathlib.Path(sys.executable).with_name("ecp")
COMMAND = [str(ECP)] if ECP.exists() else [sys.executable, "-m", "ecp_http.cli"]
REF = "orders"


def reviewed(version: str, review: str = "review") -> dict[str, Any]:
    """``review`` (an approval) → ``record`` (sets ``version``) → ``done``."""
    return {
        "graph_id": "orders",
        "entry": review,
        "nodes": [
            {"id": review, "kind": "approval", "summary": "Check", "rationale": "A person"},
            {
                "id": "record",
                "kind": "action",
                "action": {
                    "name": "set",
                    "fingerprint": "set/1",
                    "arguments": {"values": {"version": version}},
                },
            },
            {"id": "done", "kind": "end"},
        ],
        "edges": [{"source": review, "target": "record"}, {"source": "record", "target": "done"}],
    }


def register(caller: Any, graph: dict[str, Any]) -> str:
    registered = check(caller.post("/v1/graphs", json=graph), 201)
    return f"{registered['graph_id']}@{registered['version']}"


def approve(caller: Any, run_id: str) -> dict[str, Any]:
    approval = only_pending_approval(caller, run_id)
    path = f"/deployments/{REF}/approvals/{approval['approval_id']}/resolve"
    return check(caller.post(path, json={"decision": "approve"}), 200)["run"]


@pytest.mark.spec("C17 migrate", "C17 migrate-access")
def test_a_run_waiting_at_an_approval_moves_to_v2_and_completes_there(ecp_server, tenant, admin):
    deploy(admin, reviewed("v1"), REF)
    run = start(admin, REF)
    assert run["status"] == "waiting_approval"
    v2 = register(admin, reviewed("v2"))
    move = f"/runs/{run['run_id']}/migrate"
    for role in ("viewer", "analyst", "approver", "worker"):
        problem(ecp_server.caller(tenant, role).post(move, json={"graph_version_ref": v2}), 403)
    other = ecp_server.caller(tenant + "-other", "admin")
    problem(other.post(move, json={"graph_version_ref": v2}), 404, "not_found")
    problem(admin.post(move, json={}), 422, "validation_failed")
    problem(admin.post(move, json={"graph_version_ref": "orders@9"}), 404, "not_found")
    operator = ecp_server.caller(tenant, "operator", subject="ops@example.com")

    moved = check(operator.post(move, json={"graph_version_ref": v2}), 200)

    assert moved["graph_version_ref"] == v2
    assert moved["status"] == "waiting_approval"
    assert moved["pending_approval_ids"] == run["pending_approval_ids"]
    timeline = check(admin.get(f"/runs/{run['run_id']}/timeline"), 200)["entries"]
    last = timeline[-1]
    assert (last["status"], last["graph_version_ref"]) == ("migrated", v2)
    assert last["execution_metadata"]["from_graph_version_ref"] == "orders@1"
    assert last["execution_metadata"]["actor"]["subject"] == "ops@example.com"
    done = approve(admin, run["run_id"])
    assert done["status"] == "completed"
    assert done["output"] == {"order": "A-1", "version": "v2"}
    verified = check(admin.get(f"/runs/{run['run_id']}/audit/verify"), 200)
    assert (verified["verified"], verified["signature_verified"]) == (True, True)


@pytest.mark.spec("C17 migrate-refused")
def test_a_run_whose_node_is_missing_in_v2_is_refused_and_left_as_it_was(admin):
    deploy(admin, reviewed("v1"), REF)
    run = start(admin, REF)
    v2 = register(admin, reviewed("v2", review="check"))
    before = [
        admin.get(path).json()
        for path in (f"/runs/{run['run_id']}", f"/runs/{run['run_id']}/timeline")
    ]

    refused = problem(
        admin.post(f"/runs/{run['run_id']}/migrate", json={"graph_version_ref": v2}),
        422,
        "migration_not_possible",
    )

    assert refused["detail"] == (
        f"node 'review', where the run waits for an approval, does not exist in {v2}"
    )
    after = [
        admin.get(path).json()
        for path in (f"/runs/{run['run_id']}", f"/runs/{run['run_id']}/timeline")
    ]
    assert after == before
    body = {"graph_version_ref": v2, "node_map": {"review": "check"}}
    moved = check(admin.post(f"/runs/{run['run_id']}/migrate", json=body), 200)
    assert moved["graph_version_ref"] == v2
    assert approve(admin, run["run_id"])["output"]["version"] == "v2"


@pytest.mark.spec("C17 migrate-bulk")
def test_ecp_runs_migrate_moves_a_versions_waiting_runs_and_reports_each(ecp_server, tenant, admin):
    deploy(admin, reviewed("v1"), REF)
    runs = [start(admin, REF)["run_id"] for _ in range(3)]
    v2 = register(admin, reviewed("v2", review="check"))
    env = {"ECP_URL": ecp_server.base_url, "ECP_TOKEN": ecp_server.token(tenant, "operator")}
    clean = {key: value for key, value in os.environ.items() if not key.startswith("ECP_")}

    def ecp(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*COMMAND, "runs", "migrate", "--from-version", "orders@1", "--to-version", v2, *args],
            env={**clean, **env},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    assert ecp("--node-map", "review").returncode == 2
    refused = ecp("--format", "json")
    assert refused.returncode == 1
    report = json.loads(refused.stdout)
    assert (report["migrated"], report["refused"]) == (0, 3)
    assert {result["run_id"] for result in report["results"]} == set(runs)
    assert all("does not exist in orders@2" in result["reason"] for result in report["results"])

    moved = ecp("--node-map", "review=check")
    assert (moved.returncode, moved.stderr) == (0, "")
    lines = moved.stdout.splitlines()
    assert lines[-1] == "3 migrated, 0 refused"
    assert {line.split()[0] for line in lines[1:4]} == set(runs)
    for run_id in runs:
        assert approve(admin, run_id)["output"]["version"] == "v2"
    again = ecp("--node-map", "review=check")
    assert (again.returncode, again.stdout.splitlines()[-1]) == (0, "0 migrated, 0 refused")
    other = ecp_server.caller(tenant, "viewer")
    body = {"from_version": "orders@1", "to_version": v2}
    problem(other.post("/v1/runs/migrate", json=body), 403, "forbidden")
    problem(admin.post("/v1/runs/migrate", json={**body, "limit": 0}), 422, "validation_failed")
