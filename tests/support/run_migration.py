"""Graphs and helpers of the tests that move waiting runs between graph versions (ADR 0090)."""

from typing import Any

import pytest
from tests.support.child_runs import ACTOR, TENANT, World

from ecp_core.errors import MigrationNotPossible
from ecp_core.graphs import GraphBuilder
from ecp_core.graphs.definition import GraphDefinition
from ecp_core.runs.approvals.model import ApprovalResolutionRequest
from ecp_core.runs.run.migration import MigrateRunRequest
from ecp_core.runs.run.model import Run
from ecp_core.runs.tasks.model import TaskClaimRequest, TaskCompleteRequest
from ecp_core.types import ApprovalDecision

APPROVE = ApprovalResolutionRequest(decision=ApprovalDecision.APPROVE)
WAITS = ("approval", "task", "interrupt", "wait")
"""The kinds of node a run waits at and can move from."""


def set_node(builder: GraphBuilder, node_id: str, version: str) -> GraphBuilder:
    """Add an action node ``node_id`` that sets ``version`` in the run state."""
    return builder.action(node_id, "set", arguments={"values": {"version": version}})


def reviewed(version: str, *, review: str = "review", after: str = "record") -> GraphDefinition:
    """``review`` (an approval) → ``after`` (sets ``version``) → ``done``."""
    builder = GraphBuilder("orders").approval(review, summary="Check", rationale="A person")
    return set_node(builder, after, version).end("done").chain(review, after, "done").build()


def waiting_at(kind: str, version: str, node_id: str = "hold") -> GraphDefinition:
    """A graph whose first node waits (``kind``), then sets ``version`` and ends."""
    builder = GraphBuilder("orders")
    if kind == "approval":
        builder.approval(node_id, summary="Check", rationale="A person")
    elif kind == "task":
        builder.task(node_id, "pack")
    elif kind == "interrupt":
        builder.interrupt(node_id, target_path="answer")
    else:
        builder.wait(node_id, seconds=60)
    return set_node(builder, "record", version).end("done").chain(node_id, "record", "done").build()


def moved(world: World, run: Run, ref: str = "orders@2", **node_map: str) -> Run:
    request = MigrateRunRequest(graph_version_ref=ref, node_map=node_map or None)
    return world.ecp.runs.migrate(ACTOR, run.run_id, request)


def snapshot(world: World, run: Run) -> tuple[Any, ...]:
    """Everything a refused move must leave as it was: the run, its chain, approvals and tasks."""
    return (
        world.ecp.runs.get(TENANT, run.run_id),
        world.records(run.run_id),
        world.ecp.approvals.for_run(TENANT, run.run_id),
        world.ecp.tasks.for_run(TENANT, run.run_id, limit=25),
    )


def refused(world: World, run: Run, ref: str = "orders@2", **node_map: str) -> str:
    before = snapshot(world, run)
    with pytest.raises(MigrationNotPossible) as caught:
        moved(world, run, ref, **node_map)
    assert snapshot(world, run) == before
    return caught.value.detail


def finish(world: World, run: Run, kind: str) -> None:
    """Make the run's wait end as its kind ends, then dispatch until nothing is left."""
    if kind == "approval":
        world.ecp.resolve(ACTOR, "orders", run.pending_approval_ids[0], APPROVE)
    elif kind == "task":
        claim = TaskClaimRequest(worker_id="w", topics=("pack",))
        (task,) = world.ecp.tasks.claim(TENANT, claim)
        done = TaskCompleteRequest(lock_token=task.lock_token, output={})
        world.ecp.tasks.complete(TENANT, task.task_id, done)
    elif kind == "interrupt":
        world.ecp.runs.resume(TENANT, run.run_id, "yes")
    else:
        world.clock.advance(61)
        world.ecp.runs.wake_timers()
    world.settle()
