"""Moving waiting runs as a Hypothesis state machine, on the memory store (ADR 0090).

Any interleaving of starting runs, dispatching them, moving them between three versions of their
graph (with and without a node map), approving, completing tasks, resuming interrupts and time
passing keeps these true after every step:

- a run is on the version its last ``migrated`` record moved it to (its start's when none);
- a refused move changes nothing: the run, its chain, its approvals and its tasks stay as they were;
- a waiting run waits at a node of its own version, of the kind its wait needs, and its pending
  approvals and open tasks point at that node (and version);
- every chain verifies, signatures included.
"""

from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test
from tests.support.child_runs import ACTOR, TENANT, World
from tests.support.run_migration import APPROVE, snapshot

from ecp_core.errors import MigrationNotPossible
from ecp_core.graphs import GraphBuilder
from ecp_core.graphs.definition import GraphDefinition
from ecp_core.runs.run.migration import MigrateRunRequest
from ecp_core.runs.run.model import Run, StartRunRequest
from ecp_core.runs.tasks.model import TaskClaimRequest, TaskCompleteRequest, TaskStatus
from ecp_core.types import ApprovalStatus, AttemptStatus, NodeKind, RunStatus

pytestmark = pytest.mark.unit

KIND_OF_WAIT = {
    RunStatus.WAITING_APPROVAL: None,  # an approval node, or a gated one: asks_approval
    RunStatus.WAITING_TASK: NodeKind.TASK,
    RunStatus.WAITING_INTERRUPT: NodeKind.INTERRUPT,
    RunStatus.WAITING_TIMER: NodeKind.WAIT,
}


def _graph(*nodes: tuple[str, str]) -> GraphDefinition:
    """Graph ``g``: the nodes ``(id, kind)`` in a chain, then ``done``."""
    builder = GraphBuilder("g")
    for node_id, kind in nodes:
        if kind == "approval":
            builder.approval(node_id, summary="Check", rationale="A person")
        elif kind == "task":
            builder.task(node_id, "pack")
        elif kind == "interrupt":
            builder.interrupt(node_id)
        else:
            builder.wait(node_id, seconds=60)
    return builder.end("done").chain(*(node_id for node_id, _ in nodes), "done").build()


VERSIONS = {
    "g@1": _graph(("a", "approval"), ("b", "task"), ("c", "interrupt"), ("d", "wait")),
    "g@2": _graph(("a2", "approval"), ("b", "task"), ("c", "interrupt")),
    "g@3": _graph(("a", "task"), ("b", "approval"), ("c", "interrupt"), ("d", "wait")),
}
MAPS = ({}, {"a": "a2"}, {"a2": "a"}, {"d": "c"}, {"ghost": "a"})


class MovingRuns(RuleBasedStateMachine):
    """Runs of ``g`` moved between its three versions while they go on."""

    def __init__(self) -> None:
        super().__init__()
        self.world = World()
        self.world.ecp.graphs.register(TENANT, VERSIONS["g@1"])
        self.world.deploy("g", VERSIONS["g@1"])
        for ref in ("g@2", "g@3"):
            self.world.ecp.graphs.register(TENANT, VERSIONS[ref])
        self.runs: list[str] = []

    def _run(self, index: int) -> Run | None:
        if not self.runs:
            return None
        return self.world.ecp.runs.get(TENANT, self.runs[index % len(self.runs)])

    @rule()
    def start(self) -> None:
        run, _ = self.world.ecp.runs.start(TENANT, StartRunRequest(deployment_ref="g"))
        self.runs.append(run.run_id)
        self.world.settle()

    @rule()
    def dispatch(self) -> None:
        self.world.settle()

    @rule(index=st.integers(0, 20), ref=st.sampled_from(sorted(VERSIONS)), which=st.integers(0, 4))
    def migrate(self, index: int, ref: str, which: int) -> None:
        run = self._run(index)
        if run is None:
            return
        before = snapshot(self.world, run)
        request = MigrateRunRequest(graph_version_ref=ref, node_map=MAPS[which])
        try:
            after = self.world.ecp.runs.migrate(ACTOR, run.run_id, request)
        except MigrationNotPossible:
            assert snapshot(self.world, run) == before
            return
        assert (after.graph_version_ref, after.status, after.state) == (ref, run.status, run.state)

    @rule(index=st.integers(0, 20))
    def approve(self, index: int) -> None:
        run = self._run(index)
        if run is not None and run.status is RunStatus.WAITING_APPROVAL:
            self.world.ecp.resolve(ACTOR, "g", run.pending_approval_ids[0], APPROVE)

    @rule()
    def work(self) -> None:
        claim = TaskClaimRequest(worker_id="w", topics=("pack",))
        for task in self.world.ecp.tasks.claim(TENANT, claim):
            assert task.lock_token is not None
            done = TaskCompleteRequest(lock_token=task.lock_token, output={})
            self.world.ecp.tasks.complete(TENANT, task.task_id, done)

    @rule(index=st.integers(0, 20))
    def resume(self, index: int) -> None:
        run = self._run(index)
        if run is not None and run.status is RunStatus.WAITING_INTERRUPT:
            self.world.ecp.runs.resume(TENANT, run.run_id, "yes")

    @rule()
    def time_passes(self) -> None:
        self.world.clock.advance(61)
        self.world.ecp.runs.wake_timers()

    @invariant()
    def each_run_is_where_its_chain_says(self) -> None:
        for run_id in self.runs:
            run = self.world.ecp.runs.get(TENANT, run_id)
            records = self.world.records(run_id)
            moves = [r for r in records if r.status == AttemptStatus.MIGRATED]
            expected = moves[-1].execution_metadata["to_graph_version_ref"] if moves else "g@1"
            assert run.graph_version_ref == expected
            assert not records or self.world.verified(run_id)  # a run not started has none
            self._waits_in_its_version(run)

    def _waits_in_its_version(self, run: Run) -> None:
        if run.status not in KIND_OF_WAIT:
            return
        assert run.next_node_id is not None
        node = VERSIONS[run.graph_version_ref].node(run.next_node_id)
        kind = KIND_OF_WAIT[run.status]
        assert node.asks_approval if kind is None else node.kind is kind
        approvals = self.world.ecp.approvals.for_run(TENANT, run.run_id, ApprovalStatus.PENDING)
        pointed: set[Any] = {(a.node_id, a.graph_version_ref) for a in approvals}
        assert pointed <= {(node.id, run.graph_version_ref)}
        tasks = self.world.ecp.tasks.for_run(TENANT, run.run_id, limit=25)
        open_nodes = {
            t.node_id for t in tasks if t.status in (TaskStatus.WAITING, TaskStatus.LOCKED)
        }
        assert open_nodes <= {node.id}


@pytest.mark.spec("C17 migrate", "C17 migrate-refused")
def test_moving_runs_while_they_go_on_keeps_every_run_consistent() -> None:
    run_state_machine_as_test(
        MovingRuns,
        settings=settings(
            max_examples=100,
            stateful_step_count=30,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )
