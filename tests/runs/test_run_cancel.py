"""Canceling a run on the memory store, through the ``Ecp`` facade (ADR 0074).

A canceled run ends ``canceled`` with one audit record naming who and why; its pending approvals
are withdrawn, its open tasks too, and the runs it started are canceled with it. Canceling again
answers the run as it is; a run that ended otherwise refuses.
"""

import contextlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.support.child_runs import ACTOR, TENANT, World, calling

from ecp_core.errors import ApprovalWithdrawn, Conflict, NotFound, RunCanceled, RunFinished
from ecp_core.graphs import GraphBuilder
from ecp_core.graphs.definition import GraphDefinition
from ecp_core.runs.approvals.model import ApprovalResolutionRequest
from ecp_core.runs.run.model import CancelRunRequest, Run, StartRunRequest
from ecp_core.runs.tasks.model import (
    TaskClaimRequest,
    TaskCompleteRequest,
    TaskFailRequest,
    TaskHeartbeatRequest,
    TaskStatus,
)
from ecp_core.types import (
    ApprovalDecision,
    ApprovalStatus,
    AttemptStatus,
    RunPublicStatus,
    RunStatus,
)

pytestmark = pytest.mark.unit

RULE = "C14 cancel"
CASCADE = "C14 cancel-cascade"
WHY = CancelRunRequest(reason="started by mistake")


def gated(graph_id: str = "gated") -> GraphDefinition:
    """``review`` (an approval) → ``done``."""
    return (
        GraphBuilder(graph_id)
        .approval("review", summary="Check it", rationale="A person decides")
        .end("done")
        .chain("review", "done")
        .build()
    )


def offered(graph_id: str = "offered") -> GraphDefinition:
    """``work`` (a task of topic ``pack``) → ``done``."""
    return GraphBuilder(graph_id).task("work", "pack").end("done").chain("work", "done").build()


def cancel(world: World, run: Run, why: CancelRunRequest = WHY) -> Run:
    return world.ecp.runs.cancel(ACTOR, run.run_id, why)


def canceled_records(world: World, run_id: str) -> list[Any]:
    return [r for r in world.records(run_id) if r.status == AttemptStatus.CANCELED]


@pytest.mark.spec(RULE, CASCADE)
def test_a_run_waiting_for_a_person_is_canceled_and_its_approval_withdrawn() -> None:
    world = World()
    world.deploy("g", gated())
    run = world.run_to_rest("g")
    assert run.status is RunStatus.WAITING_APPROVAL
    (approval_id,) = run.pending_approval_ids

    after = cancel(world, run)

    assert after.public_status is RunPublicStatus.CANCELED
    assert after.pending_approval_ids == ()
    assert world.ecp.runs.get(TENANT, run.run_id) == after
    (record,) = canceled_records(world, run.run_id)
    assert world.records(run.run_id)[-1] == record
    assert record.input_snapshot == {"reason": "started by mistake"}
    assert record.execution_metadata["actor"]["subject"] == ACTOR.subject
    assert record.execution_metadata["withdrawn_approval_ids"] == [approval_id]
    approval = world.ecp.approvals.get(TENANT, approval_id)
    assert approval.status is ApprovalStatus.WITHDRAWN
    trail = world.ecp.approvals.actions(TENANT, approval_id)
    assert [action.action for action in trail] == ["requested", "withdrawn"]
    assert world.verified(run.run_id)
    resolve = ApprovalResolutionRequest(decision=ApprovalDecision.APPROVE)
    with pytest.raises(ApprovalWithdrawn):
        world.ecp.resolve(ACTOR, "g", approval_id, resolve)


@pytest.mark.spec(RULE)
def test_canceling_again_answers_the_run_as_it_is_and_writes_nothing() -> None:
    world = World()
    world.deploy("g", gated())
    run = cancel(world, world.run_to_rest("g"))
    again = cancel(world, run, CancelRunRequest(reason="another reason"))
    assert again == run
    assert len(canceled_records(world, run.run_id)) == 1


@pytest.mark.spec(RULE)
def test_a_finished_run_refuses_and_an_unknown_run_is_not_found() -> None:
    world = World()
    world.deploy("g", gated())
    run = world.run_to_rest("g")
    world.ecp.resolve(
        ACTOR,
        "g",
        run.pending_approval_ids[0],
        ApprovalResolutionRequest(decision=ApprovalDecision.APPROVE),
    )
    world.settle()
    assert world.ecp.runs.get(TENANT, run.run_id).status is RunStatus.COMPLETED
    with pytest.raises(RunFinished):
        cancel(world, run)
    with pytest.raises(NotFound):
        world.ecp.runs.cancel(ACTOR, "no-such-run", WHY)


@pytest.mark.spec(RULE)
def test_a_pending_run_is_canceled_before_it_starts_and_never_dispatched() -> None:
    world = World()
    world.deploy("g", gated())
    run, _ = world.ecp.runs.start(TENANT, StartRunRequest(deployment_ref="g"))
    after = cancel(world, run)
    assert after.status is RunStatus.CANCELED
    assert world.ecp.runs.advance_next() is None
    (record,) = world.records(run.run_id)
    assert record.node_id == "review"  # where it would have started
    assert record.status == AttemptStatus.CANCELED


@pytest.mark.spec(CASCADE)
def test_a_canceled_runs_task_is_withdrawn_and_a_late_report_is_refused() -> None:
    world = World()
    world.deploy("t", offered())
    run = world.run_to_rest("t")
    assert run.status is RunStatus.WAITING_TASK
    (task,) = world.ecp.tasks.claim(TENANT, TaskClaimRequest(worker_id="w", topics=("pack",)))

    cancel(world, run)

    withdrawn = world.ecp.tasks.get(TENANT, task.task_id)
    assert withdrawn.status is TaskStatus.WITHDRAWN
    (record,) = canceled_records(world, run.run_id)
    assert record.execution_metadata["withdrawn_task_ids"] == [task.task_id]
    token = task.lock_token
    assert token is not None
    with pytest.raises(RunCanceled):
        world.ecp.tasks.complete(
            TENANT, task.task_id, TaskCompleteRequest(lock_token=token, output={"ok": 1})
        )
    with pytest.raises(RunCanceled):
        world.ecp.tasks.heartbeat(TENANT, task.task_id, TaskHeartbeatRequest(lock_token=token))
    with pytest.raises(RunCanceled):
        world.ecp.tasks.fail(TENANT, task.task_id, TaskFailRequest(lock_token=token, error="x"))
    assert world.ecp.tasks.claim(TENANT, TaskClaimRequest(worker_id="w", topics=("pack",))) == []
    assert world.ecp.runs.get(TENANT, run.run_id).status is RunStatus.CANCELED
    assert world.verified(run.run_id)


@pytest.mark.spec(CASCADE)
def test_canceling_a_parent_cancels_the_runs_it_started() -> None:
    world = World()
    world.deploy("leafy", gated("leafy"))
    world.deploy("mid", calling("mid", "leafy"))
    world.deploy("top", calling("top", "mid"))
    top = world.run_to_rest("top")
    (mid,) = world.children(top.run_id)
    (leaf,) = world.children(mid.run_id)
    assert leaf.status is RunStatus.WAITING_APPROVAL

    cancel(world, top)

    for run in (top, mid, leaf):
        assert world.ecp.runs.get(TENANT, run.run_id).status is RunStatus.CANCELED
        (record,) = canceled_records(world, run.run_id)
        assert world.records(run.run_id)[-1] == record
        assert world.verified(run.run_id)
    (leaf_record,) = canceled_records(world, leaf.run_id)
    assert leaf_record.execution_metadata["canceled_with_parent_run_id"] == mid.run_id
    approval = world.ecp.approvals.get(TENANT, leaf.pending_approval_ids[0])
    assert approval.status is ApprovalStatus.WITHDRAWN


@pytest.mark.spec(CASCADE)
def test_a_child_canceled_alone_fails_its_waiting_parent() -> None:
    world = World()
    world.deploy("leafy", gated("leafy"))
    world.deploy("top", calling("top", "leafy"))
    top = world.run_to_rest("top")
    (leaf,) = world.children(top.run_id)

    cancel(world, leaf)

    parent = world.ecp.runs.get(TENANT, top.run_id)
    assert parent.status is RunStatus.FAILED
    assert parent.failure_state is not None
    assert parent.failure_state.reason == "child_failed"
    assert "canceled" in parent.failure_state.message


OPERATIONS = st.lists(st.sampled_from(["settle", "approve", "reject", "claim", "complete"]))


@pytest.mark.spec(RULE)
@given(before=OPERATIONS, after=OPERATIONS)
def test_a_canceled_run_takes_no_further_step(before: list[str], after: list[str]) -> None:
    """Whatever happened before the cancel, nothing after it adds a record or moves the run.

    The graph waits for a person, then for a worker; operations play what people, workers
    and the dispatcher do, before and after the cancel.
    """
    world = World()
    world.deploy(
        "g",
        GraphBuilder("g")
        .approval("review", summary="Check it", rationale="A person decides")
        .task("work", "pack")
        .end("done")
        .chain("review", "work", "done")
        .build(),
    )
    run, _ = world.ecp.runs.start(TENANT, StartRunRequest(deployment_ref="g"))
    for operation in before:
        play(world, run.run_id, operation)
    current = world.ecp.runs.get(TENANT, run.run_id)
    if current.status is RunStatus.COMPLETED or current.status is RunStatus.FAILED:
        with pytest.raises(RunFinished):
            cancel(world, current)
        return
    canceled = cancel(world, current)
    records = world.records(run.run_id)
    for operation in after:
        play(world, run.run_id, operation)
    assert world.ecp.runs.get(TENANT, run.run_id) == canceled
    assert world.records(run.run_id) == records
    assert records[-1].status == AttemptStatus.CANCELED
    assert [r.status for r in records].count(AttemptStatus.CANCELED) == 1
    assert world.verified(run.run_id)


def play(world: World, run_id: str, operation: str) -> None:
    """One thing a person, a worker or the dispatcher does; refusals are part of the game."""
    run = world.ecp.runs.get(TENANT, run_id)
    if operation == "settle":
        world.settle()
    elif operation in ("approve", "reject"):
        for approval in world.ecp.approvals.for_run(TENANT, run_id):
            request = ApprovalResolutionRequest(decision=ApprovalDecision(operation))
            with contextlib.suppress(Conflict):  # resolved before, or withdrawn
                world.ecp.approvals.resolve(
                    ACTOR, run.deployment_ref, approval.approval_id, request
                )
    elif operation == "claim":
        world.ecp.tasks.claim(TENANT, TaskClaimRequest(worker_id="w", topics=("pack",)))
    else:
        tasks, _ = world.ecp.tasks.page(TENANT, status=TaskStatus.LOCKED)
        for task in tasks:
            assert task.lock_token is not None
            request = TaskCompleteRequest(lock_token=task.lock_token, output={"packed": True})
            world.ecp.tasks.complete(TENANT, task.task_id, request)
