"""Approval rules over HTTP, against the e2e server on PostgreSQL (ADR 0075).

A graph's approval node asks for two approvers and refuses the run's starter; another names its
approvers. The starter is 403 ``self_approval_forbidden``, a second approval by the same person
409 ``already_approved``, someone not named 403 ``not_an_approver``; the inbox shows each caller
what they may resolve; bad rules are 422 at ``POST /v1/graphs`` with their location.
"""

from typing import Any

import pytest
from tests.support.e2e import check, deploy, problem, start

pytestmark = pytest.mark.e2e

FOUR_EYES = "C14 four-eyes"
APPROVERS = "C14 approvers"
RULES = "C14 approval-rules"
APPROVE = {"decision": "approve"}


def reviewed(graph_id: str, **rules: Any) -> dict[str, Any]:
    """``review`` (an approval node with ``rules``) → ``done``."""
    return {
        "graph_id": graph_id,
        "entry": "review",
        "nodes": [
            {
                "id": "review",
                "kind": "approval",
                "summary": "Pay the supplier",
                "rationale": "Payments need four eyes",
                **rules,
            },
            {"id": "done", "kind": "end"},
        ],
        "edges": [{"source": "review", "target": "done"}],
    }


def resolve_path(ref: str, approval_id: str) -> str:
    return f"/deployments/{ref}/approvals/{approval_id}/resolve"


@pytest.mark.spec(FOUR_EYES, APPROVERS)
def test_two_people_other_than_the_starter_must_approve(ecp_server, tenant, admin):
    deploy(admin, reviewed("pay", min_approvals=2, forbid_self_approval=True), "pay")
    maker = ecp_server.caller(tenant, "operator", "approver", subject="maker@example.com")
    run = start(maker, "pay")
    assert run["status"] == "waiting_approval"
    assert run["started_by"] == "maker@example.com"
    (approval_id,) = run["pending_approval_ids"]
    approval = check(admin.get(f"/v1/approvals/{approval_id}"), 200)
    assert approval["min_approvals"] == 2
    assert approval["forbid_self_approval"] is True
    assert approval["run_started_by"] == "maker@example.com"
    assert approval["approvals"] == []
    resolve = resolve_path("pay", approval_id)

    problem(maker.post(resolve, json=APPROVE), 403, "self_approval_forbidden")
    first = ecp_server.caller(tenant, "approver", subject="first@example.com")
    answer = check(first.post(resolve, json={**APPROVE, "reason": "checked"}), 200)
    assert answer["approval"]["status"] == "pending"
    assert [a["actor"]["subject"] for a in answer["approval"]["approvals"]] == ["first@example.com"]
    assert answer["run"]["status"] == "waiting_approval"
    problem(first.post(resolve, json=APPROVE), 409, "already_approved")

    second = ecp_server.caller(tenant, "approver", subject="second@example.com")
    done = check(second.post(resolve, json=APPROVE, headers={"Prefer": "wait=10"}), 200)
    assert done["approval"]["status"] == "resolved"
    assert done["approval"]["resolution"]["actor"]["subject"] == "second@example.com"
    run_id = run["run_id"]
    finished = check(admin.get(f"/runs/{run_id}", headers={"Prefer": "wait=10"}), 200)
    assert finished["status"] == "completed"
    problem(first.post(resolve, json=APPROVE), 409, "approval_already_resolved")

    timeline = check(admin.get(f"/runs/{run_id}/timeline"), 200)["entries"]
    approvals = [e for e in timeline if e["status"] == "approved"]
    assert [e["execution_metadata"]["approval_count"] for e in approvals] == [1, 2]
    assert [e["execution_metadata"]["min_approvals"] for e in approvals] == [2, 2]
    assert [e["execution_metadata"]["actor"]["subject"] for e in approvals] == [
        "first@example.com",
        "second@example.com",
    ]
    verified = check(admin.get(f"/runs/{run_id}/audit/verify"), 200)
    assert verified["verified"] is True


@pytest.mark.spec(APPROVERS)
def test_named_approvers_resolve_and_see_it_in_their_inbox(ecp_server, tenant, admin):
    deploy(admin, reviewed("named", approver_subjects=["carol@example.com"]), "named")
    deploy(admin, reviewed("admins", approver_roles=["admin"]), "admins")
    deploy(admin, reviewed("anyone", forbid_self_approval=True), "anyone")
    maker = ecp_server.caller(tenant, "operator", "approver", subject="maker@example.com")
    ids = {
        ref: start(maker, ref)["pending_approval_ids"][0] for ref in ("named", "admins", "anyone")
    }
    carol = ecp_server.caller(tenant, "approver", subject="carol@example.com")
    dave = ecp_server.caller(tenant, "approver", subject="dave@example.com")
    boss = ecp_server.caller(tenant, "admin", subject="boss@example.com")

    def inbox(caller: Any) -> set[str]:
        page = check(caller.get("/v1/approvals", params={"status": "pending"}), 200)
        shown = {a["approval_id"] for a in page["approvals"]}
        return {ref for ref, approval_id in ids.items() if approval_id in shown}

    assert inbox(carol) == {"named", "anyone"}
    assert inbox(dave) == {"anyone"}
    assert inbox(boss) == {"admins", "anyone"}
    assert inbox(maker) == set()

    problem(dave.post(resolve_path("named", ids["named"]), json=APPROVE), 403, "not_an_approver")
    problem(boss.post(resolve_path("named", ids["named"]), json=APPROVE), 403, "not_an_approver")
    problem(carol.post(resolve_path("admins", ids["admins"]), json=APPROVE), 403, "not_an_approver")
    check(carol.post(resolve_path("named", ids["named"]), json=APPROVE), 200)
    check(boss.post(resolve_path("admins", ids["admins"]), json={"decision": "reject"}), 200)
    assert inbox(carol) == {"anyone"}


@pytest.mark.spec(RULES)
def test_bad_rules_are_refused_with_their_location_and_nothing_is_stored(admin):
    cases = [
        ({"min_approvals": 0}, ["nodes", 0, "min_approvals"]),
        ({"min_approvals": 11}, ["nodes", 0, "min_approvals"]),
        ({"approver_roles": ["auditor"]}, ["nodes", 0, "approver_roles", 0]),
        ({"approver_subjects": [""]}, ["nodes", 0, "approver_subjects", 0]),
    ]
    for rules, loc in cases:
        refused = problem(admin.post("/v1/graphs", json=reviewed("bad", **rules)), 422)
        assert loc in [error["loc"] for error in refused["errors"]], refused
    mapping = {
        "graph_id": "bad",
        "entry": "m",
        "nodes": [
            {
                "id": "m",
                "kind": "action",
                "action": {"name": "echo", "fingerprint": "echo/1"},
                "approver_subjects": ["carol@example.com"],
            },
            {"id": "done", "kind": "end"},
        ],
        "edges": [{"source": "m", "target": "done"}],
    }
    refused = problem(admin.post("/v1/graphs", json=mapping), 422, "validation_failed")
    assert [error["loc"] for error in refused["errors"]] == [["nodes", 0, "approver_subjects"]]
    problem(admin.get("/v1/graphs/bad/versions"), 404, "not_found")
