"""Pausing runs and deployments on the memory store, through the ``Ecp`` facade (ADR 0076).

A paused run is never attempted; it keeps what it waits for; a paused deployment queues its new
runs paused; unpausing lets them run again, oldest first.
"""

import pytest
from tests.support.child_runs import ACTOR, TENANT, World

from ecp_core.errors import NotFound, RunFinished
from ecp_core.graphs import GraphBuilder
from ecp_core.graphs.definition import GraphDefinition
from ecp_core.runs.approvals.model import ApprovalResolutionRequest
from ecp_core.runs.run.model import PauseRequest, PauseSource, Run, StartRunRequest
from ecp_core.types import ApprovalDecision, RunPublicStatus, RunStatus

pytestmark = pytest.mark.unit

PAUSE = "C14 pause"
KEEPS = "C14 pause-keeps-waits"


def reviewed() -> GraphDefinition:
    """``prepare`` (set) → ``review`` (an approval) → ``send`` (echo) → ``done``."""
    return (
        GraphBuilder("reviewed")
        .action("prepare", "set", arguments={"values": {"ready": True}})
        .approval("review", summary="Check it", rationale="A person decides")
        .action("send", "echo")
        .end("done")
        .chain("prepare", "review", "send", "done")
        .build()
    )


def started(world: World, ref: str = "r") -> Run:
    run, _ = world.ecp.runs.start(TENANT, StartRunRequest(deployment_ref=ref))
    return run


@pytest.mark.spec(PAUSE)
def test_a_paused_run_is_never_dispatched_until_unpaused() -> None:
    world = World()
    world.deploy("r", reviewed())
    run = started(world)
    paused = world.ecp.runs.pause(ACTOR, run.run_id, PauseRequest(reason="look first"))
    assert paused.paused_by == (PauseSource.RUN,)
    assert paused.public_status is RunPublicStatus.PAUSED
    assert world.ecp.runs.pause(ACTOR, run.run_id) == paused  # twice: nothing more
    assert world.ecp.runs.advance_next() is None
    assert world.ecp.runs.drive(TENANT, run.run_id) == paused
    assert world.records(run.run_id) == ()

    unpaused = world.ecp.runs.unpause(ACTOR, run.run_id)
    assert unpaused.paused_by == ()
    assert unpaused.public_status is RunPublicStatus.PENDING
    world.settle()
    assert world.ecp.runs.get(TENANT, run.run_id).status is RunStatus.WAITING_APPROVAL
    assert world.verified(run.run_id)


@pytest.mark.spec(KEEPS)
def test_a_paused_run_keeps_its_approval_and_waits_after_it_until_unpaused() -> None:
    world = World()
    world.deploy("r", reviewed())
    run = world.run_to_rest("r")
    (approval_id,) = run.pending_approval_ids
    paused = world.ecp.runs.pause(ACTOR, run.run_id)
    assert paused.public_status is RunPublicStatus.WAITING_APPROVAL  # it waits for a person
    records = world.records(run.run_id)

    answer = world.ecp.resolve(
        ACTOR, "r", approval_id, ApprovalResolutionRequest(decision=ApprovalDecision.APPROVE)
    )

    assert answer.run.status is RunPublicStatus.PAUSED
    after = world.ecp.runs.get(TENANT, run.run_id)
    assert (after.status, after.next_node_id) == (RunStatus.RUNNING, "send")
    assert len(world.records(run.run_id)) == len(records) + 1  # the approval, nothing after
    world.settle()
    assert world.ecp.runs.get(TENANT, run.run_id) == after
    world.ecp.runs.unpause(ACTOR, run.run_id)
    world.settle()
    assert world.ecp.runs.get(TENANT, run.run_id).status is RunStatus.COMPLETED
    assert world.verified(run.run_id)


@pytest.mark.spec(PAUSE, KEEPS)
def test_a_paused_deployment_queues_its_runs_and_lets_them_go_oldest_first() -> None:
    world = World()
    world.deploy("r", reviewed())
    waiting = world.run_to_rest("r")
    own = world.ecp.runs.pause(ACTOR, started(world).run_id)
    queued = started(world)

    deployment = world.ecp.runs.pause_deployment(ACTOR, "r", PauseRequest(reason="incident"))

    assert deployment.paused
    assert world.ecp.graphs.deployment(TENANT, "r").paused
    later = started(world)
    assert later.paused_by == (PauseSource.DEPLOYMENT,)
    assert later.public_status is RunPublicStatus.PAUSED
    assert world.ecp.runs.advance_next() is None
    for run in (waiting, queued, later):
        assert PauseSource.DEPLOYMENT in world.ecp.runs.get(TENANT, run.run_id).paused_by
    assert world.ecp.runs.get(TENANT, own.run_id).paused_by == (
        PauseSource.RUN,
        PauseSource.DEPLOYMENT,
    )

    assert not world.ecp.runs.unpause_deployment(ACTOR, "r").paused
    order = []
    while (moved := world.ecp.runs.advance_next()) is not None:
        order.append(moved.run_id)
    assert order == [queued.run_id, later.run_id]  # oldest first; one attempt to the approval
    assert world.ecp.runs.get(TENANT, own.run_id).paused_by == (PauseSource.RUN,)
    assert world.ecp.runs.get(TENANT, waiting.run_id).paused_by == ()


@pytest.mark.spec(PAUSE)
def test_an_ended_run_refuses_and_unknown_ones_are_not_found() -> None:
    world = World()
    world.deploy("r", reviewed())
    run = world.run_to_rest("r")
    world.ecp.resolve(
        ACTOR,
        "r",
        run.pending_approval_ids[0],
        ApprovalResolutionRequest(decision=ApprovalDecision.REJECT),
    )
    with pytest.raises(RunFinished):
        world.ecp.runs.pause(ACTOR, run.run_id)
    with pytest.raises(NotFound):
        world.ecp.runs.pause(ACTOR, "no-such-run")
    with pytest.raises(NotFound):
        world.ecp.runs.pause_deployment(ACTOR, "no-such-deployment")
