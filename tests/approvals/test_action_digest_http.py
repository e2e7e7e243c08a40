"""The approval's ``action_digest`` over HTTP, against the e2e server on PostgreSQL (ADR 0080).

Every approval answer carries its digest; a resolution naming a digest that no longer matches
(another approver voted, the run was canceled) is 409 ``approval_changed`` and writes nothing.
"""

import pytest
from tests.support.e2e import check, deploy, problem, start

pytestmark = pytest.mark.e2e

RULE = "C15 action-digest"


def reviewed(graph_id: str, min_approvals: int = 1) -> dict[str, object]:
    return {
        "graph_id": graph_id,
        "entry": "review",
        "nodes": [
            {
                "id": "review",
                "kind": "approval",
                "summary": "Pay the supplier",
                "rationale": "Payments need a person",
                "min_approvals": min_approvals,
            },
            {"id": "done", "kind": "end"},
        ],
        "edges": [{"source": "review", "target": "done"}],
    }


@pytest.mark.spec(RULE)
def test_a_stale_digest_after_another_approvers_vote_is_409_and_writes_nothing(
    ecp_server, tenant, admin
):
    deploy(admin, reviewed("pay2", min_approvals=2), "pay2")
    run = start(admin, "pay2")
    (approval_id,) = run["pending_approval_ids"]
    shown = check(admin.get(f"/v1/approvals/{approval_id}"), 200)["action_digest"]
    inbox = check(admin.get("/v1/approvals", params={"run_id": run["run_id"]}), 200)
    assert [a["action_digest"] for a in inbox["approvals"]] == [shown]
    resolve = f"/deployments/pay2/approvals/{approval_id}/resolve"
    first = ecp_server.caller(tenant, "approver", subject="first@example.com")
    voted = check(first.post(resolve, json={"decision": "approve", "action_digest": shown}), 200)
    assert voted["approval"]["action_digest"] != shown
    timeline = check(admin.get(f"/runs/{run['run_id']}/timeline"), 200)["entries"]

    second = ecp_server.caller(tenant, "approver", subject="second@example.com")
    stale = {"decision": "approve", "action_digest": shown}
    body = problem(second.post(resolve, json=stale), 409, "approval_changed")
    assert "1 of 2 approvals" in body["detail"]
    approval = check(admin.get(f"/v1/approvals/{approval_id}"), 200)
    assert [a["actor"]["subject"] for a in approval["approvals"]] == ["first@example.com"]
    assert check(admin.get(f"/runs/{run['run_id']}/timeline"), 200)["entries"] == timeline

    fresh = {"decision": "approve", "action_digest": approval["action_digest"]}
    done = check(second.post(resolve, json=fresh, headers={"Prefer": "wait=10"}), 200)
    assert done["approval"]["status"] == "resolved"


@pytest.mark.spec(RULE)
def test_a_stale_digest_after_a_cancel_is_409_approval_changed(ecp_server, tenant, admin):
    deploy(admin, reviewed("pay1"), "pay1")
    run = start(admin, "pay1")
    (approval_id,) = run["pending_approval_ids"]
    shown = check(admin.get(f"/v1/approvals/{approval_id}"), 200)["action_digest"]
    check(admin.post(f"/runs/{run['run_id']}/cancel", json={"reason": "not needed"}), 200)
    resolve = f"/deployments/pay1/approvals/{approval_id}/resolve"
    problem(
        admin.post(resolve, json={"decision": "approve", "action_digest": shown}),
        409,
        "approval_changed",
    )
    problem(admin.post(resolve, json={"decision": "approve"}), 409, "approval_withdrawn")
    malformed = {"decision": "approve", "action_digest": "sha1:00"}
    problem(admin.post(resolve, json=malformed), 422)
