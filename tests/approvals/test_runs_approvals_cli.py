"""``ecp runs`` and ``ecp approvals`` as real subprocesses against the running e2e server.

They talk only to the HTTP API (``--url`` or ``ECP_URL``, ``ECP_TOKEN``): runs are listed page by
page and shown with their timeline, the inbox is listed and filtered, approvals are resolved, and
every problem the service answers is one line on stderr with exit status 1.
"""

import json
import os
import pathlib
import subprocess
import sys

import pytest
from tests.support.e2e import deploy, gated_action_graph, start

pytestmark = [pytest.mark.e2e, pytest.mark.spec("C2 runs-approvals-cli")]

ECP = pathlib.Path(sys.executable).with_name("ecp")
COMMAND = [str(ECP)] if ECP.exists() else [sys.executable, "-m", "ecp_http.cli"]
REF = "gated"


def ecp(*args, env):
    """Run ``ecp ARGS`` with exactly the ECP_* variables in ``env``."""
    clean = {key: value for key, value in os.environ.items() if not key.startswith("ECP_")}
    return subprocess.run(
        [*COMMAND, *map(str, args)],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def answer(done):
    """The JSON a successful command printed."""
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    return json.loads(done.stdout)


def one_line_failure(done, prefix):
    """Exit 1, nothing on stdout, one line on stderr starting with ``prefix``."""
    assert (done.returncode, done.stdout) == (1, ""), done.stderr
    assert done.stderr.startswith(prefix), done.stderr
    assert done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr


@pytest.fixture
def env(ecp_server, tenant):
    """An admin of this test's tenant, the service named by ECP_URL."""
    return {"ECP_URL": ecp_server.base_url, "ECP_TOKEN": ecp_server.token(tenant, "admin")}


@pytest.fixture
def waiting(admin):
    """Three runs of the gated deployment, each waiting for its approval (oldest first)."""
    deploy(admin, gated_action_graph(), REF)
    runs = [start(admin, REF) for _ in range(3)]
    assert {run["status"] for run in runs} == {"waiting_approval"}
    return runs


def test_runs_are_listed_page_by_page_newest_first(env, waiting):
    newest_first = [run["run_id"] for run in reversed(waiting)]
    first = answer(ecp("runs", "list", "--limit", 2, "--format", "json", env=env))
    assert [run["run_id"] for run in first["runs"]] == newest_first[:2]
    assert first["total"] == 3
    assert first["next_cursor"]
    rest = answer(
        ecp("runs", "list", "--cursor", first["next_cursor"], "--format", "json", env=env)
    )
    assert ([run["run_id"] for run in rest["runs"]], rest["next_cursor"]) == (
        newest_first[2:],
        None,
    )
    every = answer(ecp("runs", "list", "--all", "--format", "json", env=env))
    assert [run["run_id"] for run in every["runs"]] == newest_first

    table = ecp("runs", "list", "--limit", 2, env=env)
    assert table.returncode == 0
    header, *rows, blank, more = table.stdout.splitlines()
    assert header.split() == ["RUN", "STATUS", "DEPLOYMENT", "CREATED", "UPDATED"]
    assert [row.split()[:3] for row in rows] == [
        [r, "waiting_approval", REF] for r in newest_first[:2]
    ]
    assert blank == ""
    assert more.startswith("2 of 3 runs; the next ones: --cursor ")
    markdown = ecp("runs", "list", "--format", "markdown", env=env).stdout.splitlines()
    assert markdown[:2] == [
        "| RUN | STATUS | DEPLOYMENT | CREATED | UPDATED |",
        "| --- | --- | --- | --- | --- |",
    ]
    assert len(markdown) == 5


def test_a_run_is_shown_with_its_timeline(env, waiting):
    run_id = waiting[0]["run_id"]
    shown = answer(ecp("runs", "show", run_id, "--timeline", "--format", "json", env=env))
    assert shown["run"]["run_id"] == run_id
    assert shown["run"]["status"] == "waiting_approval"
    assert [entry["node_id"] for entry in shown["timeline"]["entries"]] == ["pay"]
    text = ecp("runs", "show", run_id, "--timeline", env=env)
    assert text.returncode == 0
    lines = text.stdout.splitlines()
    assert lines[0].split() == ["run", run_id]
    assert lines[1].split() == ["status", "waiting_approval"]
    assert ["pending", "approvals", *waiting[0]["pending_approval_ids"]] in [
        line.split() for line in lines
    ]
    timeline = lines[lines.index("") + 1 :]
    assert timeline[0].split() == ["ATTEMPT", "NODE", "STATUS", "CREATED", "DIGEST"]
    assert timeline[1].split()[:2] == ["1", "pay"]


def test_the_inbox_is_listed_filtered_and_resolved(ecp_server, tenant, env, waiting):
    approver = {**env, "ECP_TOKEN": ecp_server.token(tenant, "approver")}
    inbox = answer(
        ecp("approvals", "list", "--status", "pending", "--format", "json", env=approver)
    )
    assert [a["run_id"] for a in inbox["approvals"]] == [run["run_id"] for run in waiting]
    first, second, third = inbox["approvals"]
    of_run = answer(
        ecp("approvals", "list", "--run", second["run_id"], "--format", "json", env=approver)
    )
    assert [a["approval_id"] for a in of_run["approvals"]] == [second["approval_id"]]
    paged = ecp("approvals", "list", "--deployment", REF, "--limit", 1, env=approver)
    assert paged.returncode == 0
    assert paged.stdout.splitlines()[1].split()[:4] == [
        first["approval_id"],
        "pending",
        REF,
        first["run_id"],
    ]
    assert paged.stdout.splitlines()[-1].startswith("1 approvals shown; the next ones: --cursor ")

    approved = ecp(
        "approvals",
        "resolve",
        REF,
        first["approval_id"],
        "--decision",
        "approve",
        "--reason",
        "checked",
        env=approver,
    )
    assert (approved.returncode, approved.stderr) == (0, "")
    assert approved.stdout.startswith(
        f"approve: approval {first['approval_id']} is resolved; run {first['run_id']} is "
    )
    edited = answer(
        ecp(
            "approvals",
            "resolve",
            REF,
            second["approval_id"],
            "--decision",
            "edit_and_approve",
            "--payload",
            json.dumps({"amount": 90, "currency": "EUR", "to": "A-1"}),
            "--format",
            "json",
            env=approver,
        )
    )
    assert edited["approval"]["resolution"]["edited_payload"] == {
        "amount": 90,
        "currency": "EUR",
        "to": "A-1",
    }
    rejected = answer(
        ecp(
            "approvals",
            "resolve",
            REF,
            third["approval_id"],
            "--decision",
            "reject",
            "--reason",
            "no",
            "--format",
            "json",
            env=approver,
        )
    )
    assert rejected["run"]["status"] == "failed"
    assert answer(
        ecp("approvals", "list", "--status", "pending", "--format", "json", env=approver)
    ) == {
        "approvals": [],
        "next_cursor": None,
    }
    # A second resolve is the service's 409, in one line.
    again = ecp(
        "approvals", "resolve", REF, first["approval_id"], "--decision", "approve", env=approver
    )
    one_line_failure(again, "ecp approvals: HTTP 409 approval_already_resolved: ")


def test_problems_from_the_api_are_one_line(ecp_server, tenant, env):
    one_line_failure(ecp("runs", "show", "run_nothing", env=env), "ecp runs: HTTP 404 not_found: ")
    viewer = {**env, "ECP_TOKEN": ecp_server.token(tenant, "viewer")}
    one_line_failure(ecp("runs", "list", env=viewer), "ecp runs: HTTP 403 forbidden: ")
    one_line_failure(ecp("approvals", "list", env=viewer), "ecp approvals: HTTP 403 forbidden: ")
    forged = {**env, "ECP_TOKEN": "not-a-token"}
    one_line_failure(ecp("runs", "list", env=forged), "ecp runs: HTTP 401 unauthenticated: ")
    # --url wins over ECP_URL.
    elsewhere = {**env, "ECP_URL": "http://127.0.0.1:9"}
    assert answer(
        ecp("runs", "list", "--url", ecp_server.base_url, "--format", "json", env=elsewhere)
    ) == {"runs": [], "total": 0, "next_cursor": None}
