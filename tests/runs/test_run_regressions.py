"""Regressions found by the stateful test and review: each once left a run stuck or a chain broken."""

import math

import pytest

from ecp_core import (
    ActorIdentity,
    ApprovalDecision,
    ApprovalResolutionRequest,
    AuthMethod,
    CreateDeploymentRequest,
    Ecp,
    GraphBuilder,
    StartRunRequest,
)
from ecp_core.errors import NotFound
from ecp_core.runs.run.actions import ActionResult

pytestmark = pytest.mark.unit

ACTOR = ActorIdentity(subject="r", auth_method=AuthMethod.BEARER, tenant_id="t")


def started(graph, ecp=None):
    ecp = ecp or Ecp.in_memory()
    ecp.graphs.register("t", graph)
    ecp.graphs.deploy("t", CreateDeploymentRequest(deployment_ref="d", graph_id=graph.graph_id))
    run, _ = ecp.runs.start("t", StartRunRequest(deployment_ref="d"))
    return ecp, ecp.runs.drive("t", run.run_id)


@pytest.mark.spec("C3 interrupt-resume")
def test_a_resume_whose_exit_fails_ends_the_run_failed():
    ecp, run = started(
        GraphBuilder("g")
        .interrupt("ask", target_path="x")
        .end("yes")
        .edge("ask", "yes", when="state.x == 'yes'")
        .build()
    )
    run = ecp.runs.resume("t", run.run_id, "no")
    assert (run.status.value, run.failure_state.reason) == ("FAILED", "no_matching_edge")
    assert ecp.audit.verify_run("t", run.run_id).verified


@pytest.mark.spec("C3 interrupt-resume")
def test_an_interrupt_without_exits_completes_on_resume():
    ecp, run = started(GraphBuilder("g").interrupt("ask").build())
    assert ecp.runs.resume("t", run.run_id, {"ok": True}).output == {"ask": {"ok": True}}


@pytest.mark.spec("§3.1 approve-continues-run")
def test_an_approval_without_exits_completes_on_approve():
    ecp, run = started(GraphBuilder("g").approval("rev", summary="s", rationale="r").build())
    request = ApprovalResolutionRequest(decision=ApprovalDecision.APPROVE)
    assert (
        ecp.resolve(ACTOR, "d", run.pending_approval_ids[0], request).run.status.value
        == "completed"
    )


def test_a_handler_mutating_its_arguments_changes_no_record():
    ecp = Ecp.in_memory()

    def greedy(context):
        context.arguments["amount"] = 999
        return {"paid": context.arguments["amount"]}

    ecp.actions.register("pay", greedy)
    graph = (
        GraphBuilder("g")
        .action("pay", "pay", arguments={"amount": 1}, requires_approval=True)
        .build()
    )
    ecp, run = started(graph, ecp)
    request = ApprovalResolutionRequest(
        decision=ApprovalDecision.EDIT_AND_APPROVE, edited_payload={"amount": 5}
    )
    ecp.resolve(ACTOR, "d", run.pending_approval_ids[0], request)
    entries = ecp.audit.timeline("t", run.run_id).entries
    assert entries[1].output_snapshot == {"amount": 5}
    assert entries[2].input_snapshot == {"amount": 5}
    assert ecp.audit.verify_run("t", run.run_id).verified


@pytest.mark.spec("C3 run-failures")
@pytest.mark.parametrize(
    "result",
    [
        ActionResult(output={"ok": True}, tool_calls=[{"score": math.nan}]),
        ActionResult(output={"ok": True}, memory_interactions=[{1: "non-text key"}]),
        ActionResult(output={"ok": True}, stdout=b"bytes"),  # type: ignore[arg-type]
        ActionResult(output=["not", "an", "object"]),  # type: ignore[arg-type]
        ActionResult(output={"ok": True}, in_attempt=("not callable",)),  # type: ignore[arg-type]
    ],
)
def test_bad_handler_results_fail_the_run_instead_of_wedging_it(result):
    ecp = Ecp.in_memory()
    ecp.actions.register("odd", lambda context: result)
    ecp, run = started(GraphBuilder("g").action("a", "odd").build(), ecp)
    assert (run.status.value, run.failure_state.reason) == ("FAILED", "action_error")
    assert ecp.runs.runnable() == []
    assert ecp.audit.verify_run("t", run.run_id).verified


def test_reads_are_detached_from_the_store():
    ecp, run = started(GraphBuilder("g").action("a", "set", arguments={"values": {"x": 1}}).build())
    ecp.runs.get("t", run.run_id).output["x"] = 2
    ecp.audit.timeline("t", run.run_id).entries[0].output_snapshot["x"] = 3
    assert ecp.runs.get("t", run.run_id).output == {"x": 1}
    assert ecp.audit.verify_run("t", run.run_id).verified


@pytest.mark.spec("§5 tenant-isolation")
def test_another_tenant_cannot_read_an_approval_trail():
    ecp, run = started(GraphBuilder("g").approval("rev", summary="s", rationale="r").build())
    with pytest.raises(NotFound):
        ecp.approvals.actions("other", run.pending_approval_ids[0])
