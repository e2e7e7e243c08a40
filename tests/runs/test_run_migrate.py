"""Moving waiting runs to another version of their graph, on the memory store (ADR 0090).

A run waiting for an approval, an interrupt, a task or a timer moves when the node it waits at
is in the target version (under its id or the map's) with the same kind; it then goes on in the
new version. Anything else is refused with the reason, and nothing changes.
"""

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.support.child_runs import ACTOR, TENANT, World, calling, leaf
from tests.support.run_migration import (
    APPROVE,
    WAITS,
    finish,
    moved,
    refused,
    reviewed,
    set_node,
    snapshot,
    waiting_at,
)

from ecp_core.errors import MigrationNotPossible, NotFound
from ecp_core.graphs import GraphBuilder
from ecp_core.graphs.definition import GraphDefinition
from ecp_core.runs.run.migration import (
    MigrateRunRequest,
    MigrateVersionRequest,
    MigrationOutcome,
)
from ecp_core.types import AttemptStatus, RunStatus

pytestmark = pytest.mark.unit

RULE = "C17 migrate"
REFUSED = "C17 migrate-refused"
BULK = "C17 migrate-bulk"


@pytest.mark.spec(RULE)
def test_a_run_waiting_at_an_approval_moves_and_completes_on_the_new_version() -> None:
    world = World()
    world.deploy("orders", reviewed("v1"))
    run = world.run_to_rest("orders")
    (approval_id,) = run.pending_approval_ids
    world.ecp.graphs.register(TENANT, reviewed("v2"))

    after = moved(world, run)

    assert after.graph_version_ref == "orders@2"
    assert after.status is RunStatus.WAITING_APPROVAL
    assert after.pending_approval_ids == (approval_id,)
    assert attrs.evolve(after, graph_version_ref=run.graph_version_ref) == attrs.evolve(
        run, attempts=run.attempts + 1, updated_at=after.updated_at
    )
    record = world.records(run.run_id)[-1]
    assert record.status == AttemptStatus.MIGRATED
    assert record.graph_version_ref == "orders@2"
    assert record.execution_metadata["from_graph_version_ref"] == "orders@1"
    assert record.execution_metadata["to_graph_version_ref"] == "orders@2"
    assert record.execution_metadata["approval_ids"] == [approval_id]
    assert record.execution_metadata["actor"]["subject"] == ACTOR.subject
    approval = world.ecp.approvals.get(TENANT, approval_id)
    assert (approval.graph_version_ref, approval.node_id) == ("orders@2", "review")
    trail = [action.action for action in world.ecp.approvals.actions(TENANT, approval_id)]
    assert trail == ["requested", "migrated"]

    world.ecp.resolve(ACTOR, "orders", approval_id, APPROVE)
    world.settle()
    done = world.ecp.runs.get(TENANT, run.run_id)
    assert done.status is RunStatus.COMPLETED
    assert done.output == {"version": "v2"}
    assert world.verified(run.run_id)
    assert {r.graph_version_ref for r in world.records(run.run_id)[-3:]} == {"orders@2"}


@pytest.mark.spec(RULE)
def test_the_node_map_renames_the_node_the_run_waits_at() -> None:
    world = World()
    world.deploy("orders", reviewed("v1"))
    run = world.run_to_rest("orders")
    world.ecp.graphs.register(TENANT, reviewed("v2", review="check"))
    assert "does not exist in orders@2" in refused(world, run)

    after = moved(world, run, review="check")

    assert after.next_node_id == "check"
    assert after.paused is not None
    assert after.paused.node_id == "check"
    record = world.records(run.run_id)[-1]
    assert (record.node_id, record.execution_metadata["node_map"]) == ("check", {"review": "check"})
    assert world.ecp.approvals.get(TENANT, run.pending_approval_ids[0]).node_id == "check"
    world.ecp.resolve(ACTOR, "orders", run.pending_approval_ids[0], APPROVE)
    world.settle()
    assert world.ecp.runs.get(TENANT, run.run_id).output == {"version": "v2"}
    assert world.verified(run.run_id)


@pytest.mark.spec(RULE)
@pytest.mark.parametrize("kind", WAITS)
def test_each_kind_of_wait_moves_renamed_and_goes_on_in_the_new_version(kind: str) -> None:
    world = World()
    world.deploy("orders", waiting_at(kind, "v1"))
    run = world.run_to_rest("orders")
    assert run.status.value.startswith("WAITING_")
    world.ecp.graphs.register(TENANT, waiting_at(kind, "v2", node_id="held"))

    after = moved(world, run, hold="held")

    assert (after.next_node_id, after.status, after.wait_until) == (
        "held",
        run.status,
        run.wait_until,
    )
    if kind == "task":
        (task,) = world.ecp.tasks.for_run(TENANT, run.run_id)
        assert task.node_id == "held"
        assert world.records(run.run_id)[-1].execution_metadata["task_ids"] == [task.task_id]
    finish(world, after, kind)
    done = world.ecp.runs.get(TENANT, run.run_id)
    assert done.status is RunStatus.COMPLETED
    assert done.state["version"] == "v2"
    assert world.verified(run.run_id)


@pytest.mark.spec(REFUSED)
def test_a_run_whose_node_is_missing_in_the_target_is_refused_and_untouched() -> None:
    world = World()
    world.deploy("orders", reviewed("v1"))
    run = world.run_to_rest("orders")
    world.ecp.graphs.register(TENANT, reviewed("v2", review="check"))

    why = refused(world, run)

    assert why == ("node 'review', where the run waits for an approval, does not exist in orders@2")
    world.ecp.resolve(ACTOR, "orders", run.pending_approval_ids[0], APPROVE)
    world.settle()
    assert world.ecp.runs.get(TENANT, run.run_id).output == {"version": "v1"}


@pytest.mark.spec(REFUSED)
def test_each_refusal_says_why() -> None:
    world = World()
    world.deploy("orders", reviewed("v1"))
    world.deploy("other", leaf("other"))
    world.deploy("parent", calling("parent", "child"))
    world.deploy(
        "child", GraphBuilder("child").interrupt("ask").end("fin").chain("ask", "fin").build()
    )
    run = world.run_to_rest("orders")
    world.ecp.graphs.register(TENANT, waiting_at("task", "v2", node_id="review"))
    world.ecp.graphs.register(TENANT, reviewed("v3", review="check"))

    assert "version of graph 'other'" in refused(world, run, "other@1")
    assert "is on orders@1 already" in refused(world, run, "orders@1")
    assert "the run's version has no node 'ghost'" in refused(world, run, ghost="review")
    assert "the target version has no node 'ghost'" in refused(
        world, run, "orders@3", review="ghost"
    )
    assert "is a task node in orders@2" in refused(world, run)
    with pytest.raises(NotFound):
        moved(world, run, "orders@9")
    with pytest.raises(NotFound):
        world.ecp.runs.migrate(
            ACTOR, "no-such-run", MigrateRunRequest(graph_version_ref="orders@2")
        )

    parent = world.run_to_rest("parent")
    assert parent.status is RunStatus.WAITING_CHILD
    parent_v2 = GraphBuilder("parent").subgraph("call", "child").end("fin").chain("call", "fin")
    world.ecp.graphs.register(TENANT, parent_v2.build())
    assert "waits for a child run" in refused(world, parent, "parent@2")

    world.ecp.resolve(ACTOR, "orders", run.pending_approval_ids[0], APPROVE)
    world.settle()
    assert "has ended (completed)" in refused(world, run, "orders@3", review="check")


@pytest.mark.spec(REFUSED)
def test_an_approval_waits_only_for_a_node_that_asks_for_one() -> None:
    world = World()
    gated = (
        GraphBuilder("orders")
        .action("ship", "set", arguments={"values": {"v": 1}}, requires_approval=True)
        .end("done")
        .chain("ship", "done")
        .build()
    )
    world.deploy("orders", gated)
    run = world.run_to_rest("orders")
    assert run.status is RunStatus.WAITING_APPROVAL
    ungated = (
        GraphBuilder("orders")
        .action("ship", "set", arguments={"values": {"v": 2}})
        .end("done")
        .chain("ship", "done")
        .build()
    )
    world.ecp.graphs.register(TENANT, ungated)
    assert (
        refused(world, run)
        == "node 'ship' in orders@2 asks for no approval, and the run waits for one"
    )


@pytest.mark.spec(BULK)
def test_the_bulk_move_reports_each_run_and_pages() -> None:
    world = World()
    world.deploy("orders", reviewed("v1"))
    runs = [world.run_to_rest("orders") for _ in range(5)]
    world.ecp.resolve(ACTOR, "orders", runs[0].pending_approval_ids[0], APPROVE)
    world.settle()
    world.ecp.graphs.register(TENANT, reviewed("v2"))
    moved(world, runs[1])  # already on orders@2: not looked at
    request = MigrateVersionRequest(from_version="orders@1", to_version="orders@2", limit=2)

    first = world.ecp.runs.migrate_version(ACTOR, request)
    assert first.next_cursor is not None
    second = world.ecp.runs.migrate_version(ACTOR, attrs.evolve(request, cursor=first.next_cursor))
    assert second.next_cursor is None

    results = [*first.results, *second.results]
    assert [r.run_id for r in results] == [r.run_id for r in reversed(runs[2:])]
    assert {r.outcome for r in results} == {MigrationOutcome.MIGRATED}
    assert all(r.run is not None and r.run.graph_version_ref == "orders@2" for r in results)
    again = world.ecp.runs.migrate_version(ACTOR, attrs.evolve(request, limit=10))
    assert again.results == ()
    other = MigrateVersionRequest(from_version="orders@1", to_version="other@1")
    world.deploy("other", leaf("other"))
    with pytest.raises(MigrationNotPossible):
        world.ecp.runs.migrate_version(ACTOR, other)


@pytest.mark.spec(BULK)
def test_the_bulk_move_refuses_runs_one_by_one_with_their_reason() -> None:
    world = World()
    asking = GraphBuilder("orders").interrupt("ask").approval("hold", summary="S", rationale="R")
    world.deploy(
        "orders",
        set_node(asking, "record", "v1").end("done").chain("ask", "hold", "record", "done").build(),
    )
    at_ask = world.run_to_rest("orders")
    at_hold = world.run_to_rest("orders")
    world.ecp.runs.resume(TENANT, at_hold.run_id, "go")
    world.settle()
    at_hold = world.ecp.runs.get(TENANT, at_hold.run_id)
    assert (at_ask.next_node_id, at_hold.next_node_id) == ("ask", "hold")
    world.ecp.graphs.register(TENANT, waiting_at("approval", "v2", node_id="hold"))

    answer = world.ecp.runs.migrate_version(
        ACTOR, MigrateVersionRequest(from_version="orders@1", to_version="orders@2")
    )

    by_run = {result.run_id: result for result in answer.results}
    assert by_run[at_hold.run_id].outcome is MigrationOutcome.MIGRATED
    assert by_run[at_ask.run_id].outcome is MigrationOutcome.REFUSED
    assert by_run[at_ask.run_id].reason == (
        "node 'ask', where the run waits for an interrupt, does not exist in orders@2"
    )
    assert world.ecp.runs.get(TENANT, at_ask.run_id) == at_ask
    assert world.ecp.runs.get(TENANT, at_hold.run_id).graph_version_ref == "orders@2"


# -- the rule on random graphs -------------------------------------------------------------

KINDS = ("approval", "task", "interrupt", "wait", "gated")


def _graph(kinds: dict[str, str], end: str) -> GraphDefinition:
    """One graph of the nodes ``id → kind`` in a chain, ending at ``end``."""
    builder = GraphBuilder("g")
    for node_id, kind in kinds.items():
        if kind == "gated":
            builder.action(node_id, "set", arguments={"values": {}}, requires_approval=True)
        else:
            _add(builder, node_id, kind)
    return builder.end(end).chain(*kinds, end).build()


def _add(builder: GraphBuilder, node_id: str, kind: str) -> GraphBuilder:
    if kind == "approval":
        return builder.approval(node_id, summary="Check", rationale="A person")
    if kind == "task":
        return builder.task(node_id, "pack")
    if kind == "interrupt":
        return builder.interrupt(node_id)
    return builder.wait(node_id, seconds=60)


names = st.sampled_from(["a", "b", "c", "d"])
graphs = st.dictionaries(names, st.sampled_from(KINDS), min_size=1, max_size=4)


@pytest.mark.spec(RULE, REFUSED)
@given(v1=graphs, v2=graphs, node_map=st.dictionaries(names, names, max_size=2))
def test_a_run_moves_exactly_when_its_mapped_node_waits_the_same_way_in_the_target(
    v1: dict[str, str], v2: dict[str, str], node_map: dict[str, str]
) -> None:
    world = World()
    world.deploy("g", _graph(v1, "done"))
    run = world.run_to_rest("g")
    world.ecp.graphs.register(TENANT, _graph(v2, "fin"))
    waits_at = next(iter(v1))
    target = node_map.get(waits_at, waits_at)
    known = set(node_map) <= set(v1) and set(node_map.values()) <= set(v2)
    possible = known and v2.get(target) == v1[waits_at]
    before = snapshot(world, run)
    request = MigrateRunRequest(graph_version_ref="g@2", node_map=node_map)
    if not possible:
        with pytest.raises(MigrationNotPossible):
            world.ecp.runs.migrate(ACTOR, run.run_id, request)
        assert snapshot(world, run) == before
        return
    after = world.ecp.runs.migrate(ACTOR, run.run_id, request)
    assert (after.graph_version_ref, after.next_node_id) == ("g@2", target)
    assert (after.status, after.state, after.steps) == (run.status, run.state, run.steps)
    assert world.verified(run.run_id)
