"""Task nodes: what a step offers, and what a task's attempts do to the run that waits for it.

The first property is the pure step (policy and approval act before a task is offered); the
second drives a whole run on the memory store with a clock the test moves: for any sequence of
worker outcomes (complete, fail, let the lock run out, complete late with a lost lock), the run
ends exactly as the attempts say, with one audit record per attempt naming its worker, and at
most one completion applied.
"""

from datetime import UTC, datetime
from typing import Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ecp_core.deployments.model import CreateDeploymentRequest
from ecp_core.errors import LockLost
from ecp_core.graphs import GraphBuilder
from ecp_core.memory import MemoryStore
from ecp_core.policies.model import DeploymentPolicy
from ecp_core.runs.approvals.effects import OpenApproval
from ecp_core.runs.engine.step import Stepper
from ecp_core.runs.run.actions import ActionRegistry
from ecp_core.runs.run.effects import WriteAudit
from ecp_core.runs.run.model import Run, StartRunRequest
from ecp_core.runs.tasks.effects import OfferTask
from ecp_core.runs.tasks.model import (
    DEFAULT_LOCK_SECONDS,
    DEFAULT_MAX_ATTEMPTS,
    TaskClaimRequest,
    TaskCompleteRequest,
    TaskFailRequest,
)
from ecp_core.service import Ecp
from ecp_core.signing import Ed25519Signer
from ecp_core.system import FixedClock, SequentialIds
from ecp_core.types import Capability, RunStatus

pytestmark = pytest.mark.unit

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
RULE = "C10 external-tasks"
CAPABILITIES = st.lists(st.sampled_from(list(Capability)), unique=True, max_size=3).map(tuple)


def running(graph_entry: str) -> Run:
    return Run(
        run_id="r",
        tenant_id="t",
        deployment_ref="d",
        graph_version_ref="g@1",
        thread_id="r",
        status=RunStatus.RUNNING,
        state={"order": "A-1"},
        next_node_id=graph_entry,
        created_at=EPOCH,
        updated_at=EPOCH,
    )


@pytest.mark.spec(RULE)
@given(
    capabilities=CAPABILITIES,
    denied=st.none() | CAPABILITIES,
    gated=st.booleans(),
    lock_seconds=st.none() | st.integers(1, 3600),
    max_attempts=st.none() | st.integers(1, 100),
)
def test_a_task_is_offered_only_past_the_policy_and_the_approval(
    capabilities, denied, gated, lock_seconds, max_attempts
):
    graph = (
        GraphBuilder("g")
        .task(
            "work",
            "billing.charge",
            arguments={"amount": "1.00"},
            capabilities=capabilities,
            requires_approval=gated,
            lock_seconds=lock_seconds,
            max_attempts=max_attempts,
        )
        .end()
        .chain("work", "end")
        .build()
    )
    policy = (
        None
        if denied is None
        else DeploymentPolicy(
            tenant_id="t",
            deployment_ref="d",
            policy_id="p",
            policy_version=1,
            deny_capabilities=denied,
            updated_at=EPOCH,
        )
    )
    stepper = Stepper(FixedClock(EPOCH), SequentialIds(), ActionRegistry())
    step = stepper.attempt(running("work"), graph, policy)
    offers = [e.task for e in step.effects if isinstance(e, OfferTask)]
    if denied is not None and set(denied) & set(capabilities):
        assert step.run.status is RunStatus.FAILED
        assert offers == []
        assert [e.attempt.status.value for e in step.effects if isinstance(e, WriteAudit)] == [
            "rejected"
        ]
    elif gated:
        assert step.run.status is RunStatus.WAITING_APPROVAL
        assert offers == []
        assert any(isinstance(e, OpenApproval) for e in step.effects)
    else:
        assert step.run.status is RunStatus.WAITING_TASK
        assert step.run.next_node_id == "work"
        assert not any(isinstance(e, WriteAudit) for e in step.effects)  # attempts write them
        (task,) = offers
        assert (task.topic, task.arguments, task.state) == (
            "billing.charge",
            {"amount": "1.00"},
            {"order": "A-1"},
        )
        assert task.lock_seconds == (lock_seconds or DEFAULT_LOCK_SECONDS)
        assert task.max_attempts == (max_attempts or DEFAULT_MAX_ATTEMPTS)


Outcome = Literal["complete", "fail", "expire", "late", "lapse"]


@pytest.mark.spec(RULE)
@settings(max_examples=60, deadline=None)
@given(
    max_attempts=st.integers(1, 4),
    outcomes=st.lists(st.sampled_from(["complete", "fail", "expire", "late", "lapse"]), max_size=8),
)
def test_a_runs_task_attempts_each_leave_one_record_and_at_most_one_completion(
    max_attempts, outcomes
):
    clock = FixedClock(EPOCH)
    store = MemoryStore()
    ecp = Ecp.build(store.unit_of_work, signer=Ed25519Signer.generate(), clock=clock)  # type: ignore[arg-type]
    graph = GraphBuilder("g").task("work", "topic", max_attempts=max_attempts, lock_seconds=10)
    ecp.graphs.register("t", graph.end().chain("work", "end").build())
    ecp.graphs.deploy("t", CreateDeploymentRequest(deployment_ref="d", graph_id="g"))
    run, _ = ecp.runs.start("t", StartRunRequest(deployment_ref="d", input={"n": 0}))
    assert ecp.runs.drive("t", run.run_id).status is RunStatus.WAITING_TASK

    expected: list[tuple[str, str]] = []  # (status, worker) of each recorded attempt
    completed_by: str | None = None
    stale: tuple[str, str] | None = None  # a lock token lost to expiry
    for index, outcome in enumerate(outcomes):
        worker = f"w{index}"
        claimed = ecp.tasks.claim("t", TaskClaimRequest(worker_id=worker, topics=("topic",)))
        if not claimed:
            break  # the task is done, one way or the other
        (task,) = claimed
        if outcome == "complete":
            body = TaskCompleteRequest(lock_token=task.lock_token or "", output={"by": worker})
            ecp.tasks.complete("t", task.task_id, body)
            ecp.tasks.complete("t", task.task_id, body)  # a repeat applies nothing
            expected.append(("succeeded", worker))
            completed_by = worker
            # the completion went on to the end node in its own transaction
            assert ecp.runs.get("t", run.run_id).status is RunStatus.COMPLETED
        elif outcome == "fail":
            ecp.tasks.fail(
                "t", task.task_id, TaskFailRequest(lock_token=task.lock_token or "", error="no")
            )
            expected.append(("failed", worker))
        elif outcome == "lapse":  # no sweep: the next claim (or the last sweep) records it
            clock.advance(11)
            expected.append(("failed", worker))
        else:
            clock.advance(11)
            ecp.tasks.expire_locks()
            expected.append(("failed", worker))
            stale = (task.task_id, task.lock_token or "")
            if outcome == "late":
                with pytest.raises(LockLost):
                    late = TaskCompleteRequest(lock_token=stale[1], output={"by": "late"})
                    ecp.tasks.complete("t", stale[0], late)

    ecp.tasks.expire_locks()  # a last attempt that lapsed is the sweep's
    final = ecp.runs.drive("t", run.run_id)
    records = [r for r in ecp.audit.timeline("t", run.run_id).entries if r.node_id == "work"]
    assert [(r.status.value, r.execution_metadata["worker_id"]) for r in records] == expected
    assert [r.execution_metadata["task_attempt"] for r in records] == list(
        range(1, len(records) + 1)
    )
    if completed_by is not None:
        assert final.status is RunStatus.COMPLETED
        assert final.output == {"n": 0, "by": completed_by}
    elif len(expected) >= max_attempts:
        assert final.status is RunStatus.FAILED
        assert final.failure_state is not None
        assert final.failure_state.reason == "task_failed"
    else:
        assert final.status is RunStatus.WAITING_TASK
    verified = ecp.audit.verify_run("t", run.run_id)
    assert verified.verified
    assert verified.signature_verified is (True if verified.record_count else None)


@pytest.mark.spec(RULE)
def test_a_claim_that_takes_a_lapsed_lock_records_and_logs_the_lost_attempt(caplog):
    """The lost attempt is recorded once, naming its worker, and logged as the sweep logs it."""
    clock = FixedClock(EPOCH)
    ecp = Ecp.build(MemoryStore().unit_of_work, signer=None, clock=clock)
    graph = GraphBuilder("g").task("work", "topic", lock_seconds=10)
    ecp.graphs.register("t", graph.end().chain("work", "end").build())
    ecp.graphs.deploy("t", CreateDeploymentRequest(deployment_ref="d", graph_id="g"))
    run, _ = ecp.runs.start("t", StartRunRequest(deployment_ref="d"))
    ecp.runs.drive("t", run.run_id)
    (first,) = ecp.tasks.claim("t", TaskClaimRequest(worker_id="w1", topics=("topic",)))
    clock.advance(11)
    with caplog.at_level("INFO", logger="ecp_core.runs.tasks"):
        (second,) = ecp.tasks.claim("t", TaskClaimRequest(worker_id="w2", topics=("topic",)))
    lapsed = [r for r in caplog.records if r.getMessage() == "task lock expired"]
    assert [(r.worker_id, r.attempt, r.status) for r in lapsed] == [("w1", 1, "waiting")]
    assert (second.task_id, second.worker_id, second.attempt) == (first.task_id, "w2", 2)
    records = [r for r in ecp.audit.timeline("t", run.run_id).entries if r.node_id == "work"]
    assert [(r.status.value, r.execution_metadata["worker_id"]) for r in records] == [
        ("failed", "w1")
    ]
    assert records[0].error == {"type": "LockExpired", "message": "lock expired"}
    assert ecp.tasks.expire_locks() == 0  # nothing left for the sweep
