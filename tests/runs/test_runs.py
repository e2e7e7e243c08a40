"""Runs over HTTP: approval, policy denial, rejection, edits, interrupts, dispatch and audit."""

import base64
import itertools
import re

import nacl.exceptions
import nacl.signing
import pytest
from tests.support.e2e import (
    WAIT,
    check,
    deploy,
    example_graph,
    gated_action_graph,
    interrupt_graph,
    only_pending_approval,
    poll_until,
    problem,
    resolve,
    start,
    steps,
)

pytestmark = pytest.mark.e2e

EXAMPLE_STEPS = [
    ("classify", "succeeded"),
    ("review", "waiting_approval"),
    ("review", "approved"),
    ("notify", "succeeded"),
    ("done", "succeeded"),
]


@pytest.mark.spec(
    "§3.1 approval-pauses-run",
    "§3.1 approve-continues-run",
    "§4.1 start-and-read-run",
    "§4.1 resolve-approval",
    "§4.1 run-timeline",
    "C3 run-approvals",
    "C4 verify-routes",
)
def test_example_graph_waits_for_approval_completes_and_its_signed_chain_verifies(
    ecp_server, admin, tenant
):
    deployment = deploy(admin, example_graph(), "refunds")
    assert deployment["tenant_id"] == tenant
    run = start(admin, "refunds", {"input": {"order": "A-1001"}})
    assert run["status"] == "waiting_approval"
    assert run["tenant_id"] == tenant
    assert run["graph_version_ref"] == "refund-triage@1"
    assert len(run["pending_approval_ids"]) == 1

    approvals = check(admin.get(f"/runs/{run['run_id']}/approvals"), 200)["approvals"]
    assert [a["approval_id"] for a in approvals] == run["pending_approval_ids"]
    approval = approvals[0]
    assert approval["status"] == "pending"
    assert approval["node_id"] == "review"
    assert approval["summary"] == "Approve the refund"
    assert approval["proposed_payload"] == {"order": "A-1001", "category": "refund"}

    answer = resolve(
        admin, "refunds", approval["approval_id"], {"decision": "approve", "reason": "Looks right"}
    )
    assert answer["approval"]["status"] == "resolved"
    assert answer["approval"]["resolution"]["decision"] == "approve"
    assert answer["approval"]["resolution"]["reason"] == "Looks right"
    assert answer["run"]["status"] == "completed"

    finished = check(admin.get(f"/runs/{run['run_id']}"), 200)
    assert finished["status"] == "completed"
    assert finished["pending_approval_ids"] == []
    assert finished["failure_state"] is None
    assert finished["output"] == {"order": "A-1001", "category": "refund", "to": "customer"}

    timeline = check(admin.get(f"/runs/{run['run_id']}/timeline"), 200)
    assert timeline["run_id"] == run["run_id"]
    assert timeline["deployment_ref"] == "refunds"
    entries = timeline["entries"]
    assert [(e["node_id"], e["status"]) for e in entries] == EXAMPLE_STEPS
    assert [e["attempt"] for e in entries] == [1, 2, 3, 4, 5]
    assert entries[0]["previous_record_digest"] is None
    for before, after in itertools.pairwise(entries):
        assert after["previous_record_digest"] == before["record_digest"]

    verification = check(admin.get(f"/runs/{run['run_id']}/audit/verify"), 200)
    assert verification["verified"] is True
    assert verification["signature_verified"] is True
    assert verification["record_count"] == 5
    assert verification["unsigned_record_count"] == 0
    assert verification["failed_audit_id"] is None

    deployment_check = check(admin.get("/deployments/refunds/audits/verify"), 200)
    assert deployment_check["verified"] is True
    assert deployment_check["signature_verified"] is True
    assert deployment_check["record_count"] == 5

    records = check(admin.get("/deployments/refunds/audits", params={"run_id": run["run_id"]}), 200)
    assert records["deployment_ref"] == "refunds"
    assert sorted(r["audit_id"] for r in records["records"]) == sorted(
        e["audit_id"] for e in entries
    )

    # The published key is the server's key, and it verifies every record's signature.
    keys = check(admin.get("/v1/audit/signing-keys"), 200)["keys"]
    published = {key["key_id"]: key for key in keys}
    assert verification["signing_key_id"] in published
    key = published[verification["signing_key_id"]]
    assert key["algorithm"] == "ed25519"
    raw = base64.b64decode(key["public_key"])
    assert raw == bytes(nacl.signing.SigningKey(ecp_server.signing_seed).verify_key)
    verify_key = nacl.signing.VerifyKey(raw)
    for entry in entries:
        assert entry["signing_key_id"] == key["key_id"]
        signature = base64.b64decode(entry["signature"])
        assert verify_key.verify(entry["record_digest"].encode("ascii"), signature)
    with pytest.raises(nacl.exceptions.BadSignatureError):
        verify_key.verify(
            entries[1]["record_digest"].encode("ascii"), base64.b64decode(entries[0]["signature"])
        )


@pytest.mark.spec("§3.1 policy-denial", "C3 deployment-policy", "§6.2 audit-per-attempt")
def test_a_policy_denying_network_write_terminates_the_run_with_a_rejected_record(admin):
    deploy(admin, example_graph(), "refunds")
    policy = check(
        admin.put("/v1/deployments/refunds/policy", json={"deny_capabilities": ["network_write"]}),
        200,
    )
    assert policy["deny_capabilities"] == ["network_write"]

    run = start(admin, "refunds")
    assert run["status"] == "waiting_approval"  # classify and review carry no denied capability
    answer = resolve(admin, "refunds", run["pending_approval_ids"][0], {"decision": "approve"})
    assert answer["run"]["status"] == "terminated_by_policy"

    ended = check(admin.get(f"/runs/{run['run_id']}"), 200)
    assert ended["status"] == "terminated_by_policy"
    assert ended["failure_state"]["reason"] == "policy_violation"
    assert ended["failure_state"]["node_id"] == "notify"

    entries = check(admin.get(f"/runs/{run['run_id']}/timeline"), 200)["entries"]
    assert [(e["node_id"], e["status"]) for e in entries] == [
        ("classify", "succeeded"),
        ("review", "waiting_approval"),
        ("review", "approved"),
        ("notify", "rejected"),
    ]
    enforcement = entries[-1]["execution_metadata"]["enforcement"]
    assert enforcement["decision"] == "deny"
    assert "network_write" in enforcement["reason"]
    assert enforcement["policy_id"] == policy["policy_id"]
    assert enforcement["policy_version"] == policy["policy_version"]
    assert enforcement["denied_capabilities"] == ["network_write"]

    verification = check(admin.get(f"/runs/{run['run_id']}/audit/verify"), 200)
    assert verification["verified"] is True
    assert verification["signature_verified"] is True
    assert verification["record_count"] == 4


@pytest.mark.spec("C3 reject-fails-run", "C3 run-approvals")
def test_rejecting_the_approval_fails_the_run(admin):
    deploy(admin, example_graph(), "refunds")
    run = start(admin, "refunds")
    approval = only_pending_approval(admin, run["run_id"])
    answer = resolve(
        admin, "refunds", approval["approval_id"], {"decision": "reject", "reason": "Not a refund"}
    )
    assert answer["approval"]["resolution"]["decision"] == "reject"
    assert answer["run"]["status"] == "failed"

    ended = check(admin.get(f"/runs/{run['run_id']}"), 200)
    assert ended["status"] == "failed"
    assert ended["failure_state"]["reason"] == "approval_rejected"
    assert ended["pending_approval_ids"] == []
    assert steps(admin, run["run_id"]) == [
        ("classify", "succeeded"),
        ("review", "waiting_approval"),
        ("review", "denied"),
    ]
    assert check(
        admin.get(f"/runs/{run['run_id']}/approvals", params={"status": "pending"}), 200
    ) == {"approvals": []}
    assert check(admin.get(f"/runs/{run['run_id']}/audit/verify"), 200)["verified"] is True


@pytest.mark.spec("C3 approval-gated-action")
def test_edit_and_approve_runs_the_gated_action_with_the_edited_payload(admin):
    deploy(admin, gated_action_graph(), "payments")
    run = start(admin, "payments", {"input": {}})
    assert run["status"] == "waiting_approval"
    approval = only_pending_approval(admin, run["run_id"])
    assert approval["node_id"] == "pay"
    assert approval["proposed_payload"] == {"amount": 100, "currency": "EUR", "to": "A-1"}

    edited = {"amount": 40, "currency": "EUR", "to": "A-1", "note": "partial"}
    answer = resolve(
        admin,
        "payments",
        approval["approval_id"],
        {"decision": "edit_and_approve", "edited_payload": edited, "reason": "Partial refund"},
    )
    assert answer["approval"]["resolution"]["edited_payload"] == edited
    assert answer["run"]["status"] == "completed"
    assert answer["run"]["output"] == edited  # echo returned exactly the edited arguments

    entries = check(admin.get(f"/runs/{run['run_id']}/timeline"), 200)["entries"]
    assert [(e["node_id"], e["status"]) for e in entries] == [
        ("pay", "waiting_approval"),
        ("pay", "approved"),
        ("pay", "succeeded"),
        ("done", "succeeded"),
    ]
    executed = entries[2]
    assert executed["input_snapshot"] == edited
    assert executed["output_snapshot"] == edited
    assert executed["execution_metadata"]["approval_id"] == approval["approval_id"]


@pytest.mark.spec("C3 edit-needs-payload")
def test_edit_and_approve_without_an_edited_payload_is_refused(admin):
    deploy(admin, gated_action_graph(), "payments")
    run = start(admin, "payments", {"input": {}})
    approval_id = run["pending_approval_ids"][0]
    response = admin.post(
        f"/deployments/payments/approvals/{approval_id}/resolve",
        json={"decision": "edit_and_approve"},
    )
    problem(response, 422)
    assert only_pending_approval(admin, run["run_id"])["approval_id"] == approval_id


@pytest.mark.spec("C3 second-resolve-409")
def test_a_second_resolve_is_a_conflict(admin):
    deploy(admin, example_graph(), "refunds")
    run = start(admin, "refunds")
    approval_id = run["pending_approval_ids"][0]
    resolve(admin, "refunds", approval_id, {"decision": "approve"})
    for decision in ("approve", "reject"):
        response = admin.post(
            f"/deployments/refunds/approvals/{approval_id}/resolve", json={"decision": decision}
        )
        problem(response, 409, "approval_already_resolved")
    assert check(admin.get(f"/runs/{run['run_id']}"), 200)["status"] == "completed"
    assert len(steps(admin, run["run_id"])) == 5


@pytest.mark.spec("C3 interrupt-resume")
def test_an_interrupt_waits_and_resume_continues_the_run(admin):
    deploy(admin, interrupt_graph(), "ask")
    run = start(admin, "ask", {"input": {"order": "A-7"}})
    assert run["status"] == "waiting_interrupt"
    assert run["pending_approval_ids"] == []

    resumed = check(
        admin.post(
            f"/runs/{run['run_id']}/resume", json={"value": {"street": "Main 1"}}, headers=WAIT
        ),
        200,
    )
    assert resumed["status"] == "completed"
    assert resumed["output"] == {
        "order": "A-7",
        "prepared": True,
        "customer": {"answer": {"street": "Main 1"}},
    }
    assert steps(admin, run["run_id"]) == [
        ("prepare", "succeeded"),
        ("ask", "waiting_interrupt"),
        ("ask", "resumed"),
        ("done", "succeeded"),
    ]
    # The run no longer waits: a second resume is a conflict, not a second answer.
    again = admin.post(f"/runs/{run['run_id']}/resume", json={"value": "again"})
    problem(again, 409)


@pytest.mark.spec("C3 run-start")
def test_runs_started_without_prefer_wait_are_advanced_by_the_dispatcher(admin):
    deploy(admin, example_graph(), "refunds")
    run = start(admin, "refunds", wait=False)
    assert run["status"] in {"pending", "running", "waiting_approval"}
    waiting = poll_until(admin, run["run_id"], {"waiting_approval"})
    assert len(waiting["pending_approval_ids"]) == 1
    assert steps(admin, run["run_id"]) == EXAMPLE_STEPS[:2]

    deploy(admin, interrupt_graph(), "ask")
    asked = start(admin, "ask", wait=False)
    poll_until(admin, asked["run_id"], {"waiting_interrupt"})
    check(admin.post(f"/runs/{asked['run_id']}/resume", json={"value": "yes"}), 200)
    done = poll_until(admin, asked["run_id"], {"completed"})
    assert done["output"]["customer"] == {"answer": "yes"}

    straight = {
        "graph_id": "straight",
        "entry": "a",
        "nodes": [
            {
                "id": "a",
                "kind": "action",
                "action": {
                    "name": "set",
                    "fingerprint": "set/1",
                    "arguments": {"values": {"a": 1}},
                },
            },
            {
                "id": "b",
                "kind": "mapping",
                "operations": [
                    {"operation": "copy", "source_path": "a", "target_path": "copied.a"}
                ],
            },
            {"id": "done", "kind": "end"},
        ],
        "edges": [{"source": "a", "target": "b"}, {"source": "b", "target": "done"}],
    }
    deploy(admin, straight, "straight")
    runs = [start(admin, "straight", {"input": {"n": n}}, wait=False) for n in range(5)]
    for n, started in enumerate(runs):
        completed = poll_until(admin, started["run_id"], {"completed"})
        assert completed["output"] == {"n": n, "a": 1, "copied": {"a": 1}}


@pytest.mark.spec("C3 run-idempotency")
def test_an_idempotency_key_repeat_returns_the_same_run(admin):
    deploy(admin, example_graph(), "refunds")
    body = {"deployment_ref": "refunds", "input": {"order": "A-9"}, "idempotency_key": "order-A-9"}
    first = check(admin.post("/runs", json=body, headers=WAIT), 201)
    repeat = check(admin.post("/runs", json=body), 200)
    assert repeat["run_id"] == first["run_id"]
    assert repeat["status"] == "waiting_approval"

    changed = {**body, "input": {"order": "A-10"}}
    problem(admin.post("/runs", json=changed), 409, "conflict")
    runs = check(admin.get("/admin/runs"), 200)
    assert runs["total"] == 1


@pytest.mark.spec("C1 list-paging", "C7 link-header")
def test_the_admin_run_list_pages_with_a_link_header(admin):
    deploy(admin, example_graph(), "refunds")
    started = {start(admin, "refunds", {"input": {"n": n}}, wait=False)["run_id"] for n in range(3)}
    link = re.compile(r'<([^>]+)>;\s*rel="next"')

    seen: list[str] = []
    url = "/admin/runs?limit=1"
    for _ in range(10):
        response = admin.get(url)
        page = check(response, 200)
        assert page["total"] == 3
        assert len(page["runs"]) == 1
        seen.append(page["runs"][0]["run_id"])
        found = link.search(response.headers.get("link", ""))
        if found is None:
            break
        url = found.group(1)
    assert seen == sorted(started, reverse=True)  # newest first (ids are time-ordered)
    assert len(seen) == 3
