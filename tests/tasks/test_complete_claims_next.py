"""A completion that claims the worker's next tasks (``claim_next``), on the memory store.

A worker that keeps going asks its completion for the next tasks: they are claimed as a claim of
the same terms would claim them (never waiting), in the completion's unit of work. A repeated
completion and a refused one claim nothing.
"""

from datetime import UTC, datetime

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ecp_core.deployments.model import CreateDeploymentRequest
from ecp_core.errors import LockLost
from ecp_core.graphs import GraphBuilder
from ecp_core.memory import MemoryStore
from ecp_core.runs.run.model import StartRunRequest
from ecp_core.runs.tasks.model import (
    NextClaim,
    Task,
    TaskClaimRequest,
    TaskCompleteRequest,
    TaskStatus,
)
from ecp_core.service import Ecp
from ecp_core.signing import Ed25519Signer
from ecp_core.system import FixedClock
from ecp_core.types import RunStatus

pytestmark = pytest.mark.unit

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
RULE = "C20 complete-claims-next"
TOPIC = "billing.charge"
NEXT = NextClaim(worker_id="w", topics=(TOPIC,))


def waiting_runs(count: int) -> tuple[Ecp, list[str]]:
    """``count`` runs of a task graph, each waiting for its task, on a fresh memory store."""
    ecp = Ecp.build(
        MemoryStore().unit_of_work,  # type: ignore[arg-type]
        signer=Ed25519Signer.generate(),
        clock=FixedClock(EPOCH),
    )
    graph = GraphBuilder("g").task("work", TOPIC, lock_seconds=30).end().chain("work", "end")
    ecp.graphs.register("t", graph.build())
    ecp.graphs.deploy("t", CreateDeploymentRequest(deployment_ref="d", graph_id="g"))
    run_ids = []
    for index in range(count):
        run, _ = ecp.runs.start("t", StartRunRequest(deployment_ref="d", input={"n": index}))
        assert ecp.runs.drive("t", run.run_id).status is RunStatus.WAITING_TASK
        run_ids.append(run.run_id)
    return ecp, run_ids


def done(task: Task, claim_next: NextClaim | None = NEXT) -> TaskCompleteRequest:
    return TaskCompleteRequest(
        lock_token=task.lock_token or "", output={"by": task.task_id}, claim_next=claim_next
    )


@pytest.mark.spec(RULE)
def test_a_completion_claims_the_workers_next_task_with_it():
    ecp, run_ids = waiting_runs(2)
    (first,) = ecp.tasks.claim("t", TaskClaimRequest(worker_id="w", topics=(TOPIC,)))
    completed, claimed = ecp.tasks.complete_and_claim("t", first.task_id, done(first))
    assert completed.status is TaskStatus.COMPLETED
    assert ecp.runs.get("t", first.run_id).status is RunStatus.COMPLETED
    (second,) = claimed
    assert second.run_id == ({*run_ids} - {first.run_id}).pop()
    assert (second.status, second.worker_id, second.attempt) == (TaskStatus.LOCKED, "w", 1)
    assert second.lock_token and second.lock_token != first.lock_token
    assert ecp.tasks.get("t", second.task_id) == second  # held as answered
    assert ecp.tasks.claim("t", TaskClaimRequest(worker_id="x", topics=(TOPIC,))) == []
    # the last one's completion finds nothing to claim, and waits for nothing
    assert ecp.tasks.complete_and_claim("t", second.task_id, done(second))[1] == []
    assert ecp.runs.get("t", second.run_id).status is RunStatus.COMPLETED


@pytest.mark.spec(RULE)
def test_a_repeated_or_refused_completion_claims_nothing():
    ecp, _ = waiting_runs(3)
    (first,) = ecp.tasks.claim("t", TaskClaimRequest(worker_id="w", topics=(TOPIC,)))
    ecp.tasks.complete("t", first.task_id, done(first, claim_next=None))
    assert ecp.tasks.complete_and_claim("t", first.task_id, done(first))[1] == []  # a repeat
    stolen = attrs.evolve(first, lock_token="not-the-token")
    with pytest.raises(LockLost):
        ecp.tasks.complete_and_claim("t", first.task_id, done(stolen))
    waiting, _ = ecp.tasks.page("t", status=TaskStatus.WAITING)
    assert len(waiting) == 2  # neither call took a task


@pytest.mark.spec(RULE)
@settings(max_examples=40, deadline=None)
@given(runs=st.integers(1, 7), max_tasks=st.integers(1, 3))
def test_a_worker_that_asks_its_completions_needs_one_claim_for_a_full_queue(runs, max_tasks):
    """Every task is done once, in batches of at most ``max_tasks``, after one claim."""
    ecp, run_ids = waiting_runs(runs)
    terms = NextClaim(worker_id="w", topics=(TOPIC,), max_tasks=max_tasks)
    batch = ecp.tasks.claim(
        "t", TaskClaimRequest(worker_id="w", topics=(TOPIC,), max_tasks=max_tasks)
    )
    seen: list[str] = []
    while batch:
        assert len(batch) <= max_tasks
        following: list[Task] = []
        for index, task in enumerate(batch):
            last = index == len(batch) - 1
            _, claimed = ecp.tasks.complete_and_claim(
                "t", task.task_id, done(task, claim_next=terms if last else None)
            )
            assert claimed == [] or last
            following = claimed if last else following
            seen.append(task.run_id)
        batch = following
    assert sorted(seen) == sorted(run_ids)  # each once
    for run_id in run_ids:
        run = ecp.runs.get("t", run_id)
        assert run.status is RunStatus.COMPLETED
        records = [r for r in ecp.audit.timeline("t", run_id).entries if r.node_id == "work"]
        assert [r.status.value for r in records] == ["succeeded"]
        assert ecp.audit.verify_run("t", run_id).verified
