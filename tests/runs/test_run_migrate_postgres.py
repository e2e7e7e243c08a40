"""Moving waiting runs on PostgreSQL: each kind of wait, refusals that change no byte, races.

A refused move leaves the run's row, its chain, its approvals and its tasks byte for byte as
they were. A move racing an approval's resolution or a task's completion never leaves the run
half moved: one of the two applies first, and the chain says which (ADR 0090).
"""

import pytest
from psycopg import sql
from tests.support.child_runs import ACTOR, TENANT, World
from tests.support.run_migration import (
    APPROVE,
    WAITS,
    finish,
    moved,
    refused,
    reviewed,
    waiting_at,
)
from tests.support.together import together

from ecp_core.errors import MigrationNotPossible
from ecp_core.runs.run.migration import MigrateRunRequest
from ecp_core.runs.tasks.model import TaskClaimRequest, TaskCompleteRequest
from ecp_core.types import AttemptStatus, RunStatus

pytestmark = pytest.mark.integration

ROUNDS = 8
TABLES = ("ecp_runs", "ecp_audit_records", "ecp_approvals", "ecp_tasks")
"""Where a run's row, its chain, its approvals and its tasks are stored."""


def rows(store, run_id: str) -> dict[str, list[str]]:
    """Every stored row of the run, as its JSON text, by table."""
    with store.pool.connection() as conn:
        return {
            table: [
                row["row"]
                for row in conn.execute(
                    sql.SQL(
                        "SELECT to_jsonb(t)::text AS row FROM {} t WHERE run_id = %s ORDER BY 1"
                    ).format(sql.Identifier(table)),
                    (run_id,),
                )
            ]
            for table in TABLES
        }


@pytest.mark.spec("C17 migrate")
@pytest.mark.parametrize("kind", WAITS)
def test_each_kind_of_wait_moves_and_completes_on_postgres(postgres_store, kind):
    world = World(postgres_store.unit_of_work)
    world.deploy("orders", waiting_at(kind, "v1"))
    run = world.run_to_rest("orders")
    world.ecp.graphs.register(TENANT, waiting_at(kind, "v2", node_id="held"))

    after = moved(world, run, hold="held")

    assert (after.graph_version_ref, after.next_node_id, after.status) == (
        "orders@2",
        "held",
        run.status,
    )
    assert world.ecp.runs.get(TENANT, run.run_id) == after
    finish(world, after, kind)
    done = world.ecp.runs.get(TENANT, run.run_id)
    assert (done.status, done.state["version"]) == (RunStatus.COMPLETED, "v2")
    assert world.verified(run.run_id)


@pytest.mark.spec("C17 migrate-refused")
@pytest.mark.parametrize("kind", WAITS)
def test_a_refused_move_changes_no_byte(postgres_store, kind):
    world = World(postgres_store.unit_of_work)
    world.deploy("orders", waiting_at(kind, "v1"))
    run = world.run_to_rest("orders")
    world.ecp.graphs.register(TENANT, waiting_at(kind, "v2", node_id="held"))
    before = rows(postgres_store, run.run_id)
    assert before["ecp_runs"]
    stored_with = {"approval": "ecp_approvals", "task": "ecp_tasks"}.get(kind, "ecp_audit_records")
    assert before[stored_with]  # what it waits for is in the comparison

    why = refused(world, run)

    assert "'hold'" in why
    assert "does not exist in orders@2" in why
    assert rows(postgres_store, run.run_id) == before


@pytest.mark.spec("C17 migrate-races")
def test_a_move_and_a_resolution_never_leave_the_run_half_moved(postgres_store):
    world = World(postgres_store.unit_of_work)
    world.deploy("orders", reviewed("v1"))
    world.ecp.graphs.register(TENANT, reviewed("v2"))
    outcomes = set()
    for _ in range(ROUNDS):
        run = world.run_to_rest("orders")
        request = MigrateRunRequest(graph_version_ref="orders@2")
        resolved, migrated = together(
            lambda: world.ecp.resolve(ACTOR, "orders", run.pending_approval_ids[0], APPROVE),  # noqa: B023
            lambda: world.ecp.runs.migrate(ACTOR, run.run_id, request),  # noqa: B023
        )
        assert not isinstance(resolved, Exception), resolved
        world.settle()
        done = world.ecp.runs.get(TENANT, run.run_id)
        statuses = [r.status for r in world.records(run.run_id)]
        if isinstance(migrated, MigrationNotPossible):
            outcomes.add("resolution first")
            assert AttemptStatus.MIGRATED not in statuses
            assert (done.graph_version_ref, done.output) == ("orders@1", {"version": "v1"})
        else:
            assert not isinstance(migrated, Exception), migrated
            outcomes.add("move first")
            assert statuses.count(AttemptStatus.MIGRATED) == 1
            assert (done.graph_version_ref, done.output) == ("orders@2", {"version": "v2"})
        assert done.status is RunStatus.COMPLETED
        assert world.verified(run.run_id)
    assert outcomes  # which wins is the scheduler's choice; both are correct


@pytest.mark.spec("C17 migrate-races")
def test_a_move_and_a_task_completion_never_leave_the_run_half_moved(postgres_store):
    world = World(postgres_store.unit_of_work)
    world.deploy("orders", waiting_at("task", "v1"))
    world.ecp.graphs.register(TENANT, waiting_at("task", "v2", node_id="held"))
    for _ in range(ROUNDS):
        run = world.run_to_rest("orders")
        (task,) = world.ecp.tasks.claim(TENANT, TaskClaimRequest(worker_id="w", topics=("pack",)))
        assert task.lock_token is not None
        done = TaskCompleteRequest(lock_token=task.lock_token, output={})
        request = MigrateRunRequest(graph_version_ref="orders@2", node_map={"hold": "held"})
        completed, migrated = together(
            lambda: world.ecp.tasks.complete(TENANT, task.task_id, done),  # noqa: B023
            lambda: world.ecp.runs.migrate(ACTOR, run.run_id, request),  # noqa: B023
        )
        assert not isinstance(completed, Exception), completed
        world.settle()
        after = world.ecp.runs.get(TENANT, run.run_id)
        assert after.status is RunStatus.COMPLETED
        version = "v1" if isinstance(migrated, MigrationNotPossible) else "v2"
        assert not isinstance(migrated, Exception) or version == "v1", migrated
        assert after.state["version"] == version
        stored = world.ecp.tasks.get(TENANT, task.task_id)
        assert stored.node_id == ("hold" if version == "v1" else "held")
        assert world.verified(run.run_id)
