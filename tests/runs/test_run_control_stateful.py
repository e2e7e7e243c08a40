"""Run control as a Hypothesis state machine, on memory and on PostgreSQL (ADR 0074).

Any interleaving of starting runs (alone, or as a parent whose subgraph node starts a child),
dispatching them (driven one by one, or claimed as the dispatcher claims them), canceling them,
pausing and unpausing them and their deployments, approving and rejecting their approvals,
setting and lifting the deployments' and the tenant's concurrency limits (ADR 0079), workers
claiming, completing and failing their tasks, time passing (locks running out, timers coming due
and being woken) and the service restarting, keeps these true after every step:

- a canceled run takes no further step: its status and its chain stay as the cancel left them,
  and the cancel's record is its last;
- a run has at most one ``canceled`` record, and a canceled parent's children are canceled too;
- an ended run stays as it ended: its status holds and its chain never grows, so the record that
  ended it is its one terminal record;
- a paused run (on its own or through its deployment) takes no step when dispatched;
- no task completion is applied after its run's cancel (the worker gets ``run_canceled``);
- a run waiting on a timer has its due time, and no run wakes before it (ADR 0078);
- no concurrency limit is exceeded: counted from the store, the runs holding a slot of a
  deployment, or of the tenant, are at most its limit, or, where a limit was lowered below what
  was held, no more than at the step before;
- every chain verifies, signatures included.
"""

import contextlib
import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from tests.support.child_runs import calling

from ecp_core import (
    ActorIdentity,
    AuthMethod,
    CreateDeploymentRequest,
    Ecp,
    Ed25519Signer,
    GraphBuilder,
    ServiceRole,
    StartRunRequest,
)
from ecp_core.audit.record import NodeAuditRecord
from ecp_core.deployments.model import LimitsRequest
from ecp_core.errors import ApprovalWithdrawn, Conflict, LockLost, RunCanceled, RunFinished
from ecp_core.memory import MemoryStore
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.runs.approvals.model import ApprovalResolutionRequest
from ecp_core.runs.engine.timers import WAKE_BATCH, Woken
from ecp_core.runs.run.model import CancelRunRequest, PauseSource, Run
from ecp_core.runs.run.state_machine import TERMINAL
from ecp_core.runs.tasks.model import (
    Task,
    TaskClaimRequest,
    TaskCompleteRequest,
    TaskFailRequest,
)
from ecp_core.system import FixedClock, SequentialIds
from ecp_core.types import ApprovalDecision, ApprovalStatus, AttemptStatus, RunStatus
from ecp_postgres import PostgresStore

pytestmark = [
    pytest.mark.integration,
    pytest.mark.spec(
        "C14 cancel",
        "C14 cancel-cascade",
        "C14 pause",
        "C14 pause-keeps-waits",
        "C14 limits",
        "C14 timer",
        "C14 timer-control",
    ),
]

SIGNER = Ed25519Signer(bytes(range(90, 122)), key_id="control")
EPOCH = datetime(2026, 6, 1, tzinfo=UTC)
TOPIC = "pack"
MAX_RUNS = 6
WHY = CancelRunRequest(reason="stop")
SETTINGS = settings(
    max_examples=30,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
MEMORY_SETTINGS = settings(SETTINGS, max_examples=100, stateful_step_count=40)
"""The memory store is fast: more and longer sequences there."""


def waits_for_people_time_and_workers() -> Any:
    """``review`` (an approval) → ``nap`` (a wait of 20 s) → ``work`` (a task) → ``done``."""
    return (
        GraphBuilder("leafy")
        .approval("review", summary="Check it", rationale="A person decides")
        .wait("nap", seconds=20)
        .task("work", TOPIC, lock_seconds=30, max_attempts=2)
        .end("done")
        .chain("review", "nap", "work", "done")
        .build()
    )


class ControlMachine(RuleBasedStateMachine):
    """Random sequences over one tenant of one store (a fresh tenant per machine)."""

    uow: UnitOfWorkFactory

    def __init__(self) -> None:
        super().__init__()
        self.tenant = f"t-{uuid.uuid4().hex[:12]}"
        self.actor = ActorIdentity(
            subject="ops",
            auth_method=AuthMethod.BEARER,
            tenant_id=self.tenant,
            roles=(ServiceRole.ADMIN,),
        )
        self.clock = FixedClock(EPOCH)
        self.restarts = 0
        self.ecp = self.service()
        self.runs: list[str] = []
        self.after_cancel: dict[str, tuple[Run, tuple[NodeAuditRecord, ...]]] = {}
        """What each canceled run looked like, and its chain, right after its cancel."""
        self.ended: dict[str, tuple[RunStatus, int]] = {}
        """Each run seen ended: its status and how many records its chain had then."""
        self.held: list[Task] = []
        """Tasks some worker claimed, whose lock it may report on."""
        self.slots_before: dict[str, int] = {}
        """How many runs held a slot after the step before, by deployment ("" for the tenant)."""

    def service(self) -> Ecp:
        """The service over the store, as a (re)started process builds it."""
        ids = SequentialIds(f"{self.tenant}-{self.restarts}")
        return Ecp.build(self.uow, signer=SIGNER, clock=self.clock, ids=ids)

    @initialize()
    def deploy(self) -> None:
        for ref, graph in (
            ("leafy", waits_for_people_time_and_workers()),
            ("top", calling("top", "leafy")),
        ):
            self.ecp.graphs.register(self.tenant, graph)
            self.ecp.graphs.deploy(
                self.tenant, CreateDeploymentRequest(deployment_ref=ref, graph_id=graph.graph_id)
            )

    @initialize(limit=st.sampled_from([None, 1, 2]))
    def limit_from_the_start(self, limit: int | None) -> None:
        """Most machines start with the tenant limited, so that limits meet the other rules."""
        self.limit_the_tenant(limit)

    # -- helpers -------------------------------------------------------------------------------

    def run(self, run_id: str) -> Run:
        return self.ecp.runs.get(self.tenant, run_id)

    def records(self, run_id: str) -> tuple[NodeAuditRecord, ...]:
        return self.ecp.audit.timeline(self.tenant, run_id).entries

    def every_run(self) -> Iterator[Run]:
        """Every run of the tenant, the children the parents started included."""
        seen = list(self.runs)
        for run_id in seen:
            yield self.run(run_id)
            children, _ = self.ecp.runs.children(self.tenant, run_id, limit=500)
            seen.extend(child.run_id for child in children if child.run_id not in seen)

    def live(self) -> list[str]:
        return [run.run_id for run in self.every_run() if run.status not in TERMINAL]

    # -- rules ---------------------------------------------------------------------------------

    @precondition(lambda self: len(self.runs) < MAX_RUNS)
    @rule(ref=st.sampled_from(["leafy", "top"]), priority=st.sampled_from([5, 5, 9]))
    def start(self, ref: str, priority: int) -> None:
        """Start a run; a later one of higher priority is claimed before an earlier one."""
        request = StartRunRequest(deployment_ref=ref, priority=priority)
        run, created = self.ecp.runs.start(self.tenant, request)
        assert created
        self.runs.append(run.run_id)

    @rule(data=st.data())
    def dispatch(self, data: st.DataObject) -> None:
        runnable = [
            run.run_id
            for run in self.every_run()
            if run.status in (RunStatus.PENDING, RunStatus.RUNNING)
        ]
        if runnable:
            run_id = data.draw(st.sampled_from(runnable))
            before = self.run(run_id)
            records = self.records(run_id)
            after = self.ecp.runs.drive(self.tenant, run_id)
            if before.paused_by:  # a paused run takes no step (ADR 0076)
                assert after == before
                assert self.records(run_id) == records

    @rule(claims=st.sampled_from([1, 1, 2, 4]))
    def dispatch_next(self, claims: int) -> None:
        """The dispatcher's claims, until ``claims`` of them were of this tenant's runs.

        The store holds earlier machines' tenants too; their runs take their turns in between.
        """
        for _ in range(claims):
            for _ in range(50):
                advanced = self.ecp.runs.advance_next()
                if advanced is None or advanced.tenant_id == self.tenant:
                    break

    @rule(
        ref=st.sampled_from(["leafy", "top"]),
        limit=st.sampled_from([None, 1, 2]),
    )
    def limit_a_deployment(self, ref: str, limit: int | None) -> None:
        request = LimitsRequest(max_concurrent_runs=limit)
        changed = self.ecp.runs.set_deployment_limit(self.actor, ref, request)
        assert changed.max_concurrent_runs == limit

    @rule(limit=st.sampled_from([None, 1, 2, 3]))
    def limit_the_tenant(self, limit: int | None) -> None:
        request = LimitsRequest(max_concurrent_runs=limit)
        assert self.ecp.runs.set_tenant_limit(self.actor, request).max_concurrent_runs == limit

    @precondition(lambda self: bool(self.runs))
    @rule(data=st.data(), now=st.integers(0, 2).map(lambda n: n == 0))
    def cancel(self, data: st.DataObject, now: bool) -> None:
        """Cancel a run, one time in three (so that runs get far enough first)."""
        if not now:
            return
        every = list(self.every_run())
        target = data.draw(st.sampled_from(every))
        if target.status is RunStatus.CANCELED:
            assert self.ecp.runs.cancel(self.actor, target.run_id, WHY) == target
            return
        if target.status in TERMINAL:
            with pytest.raises(RunFinished):
                self.ecp.runs.cancel(self.actor, target.run_id, WHY)
            return
        after = self.ecp.runs.cancel(self.actor, target.run_id, WHY)
        assert after.status is RunStatus.CANCELED
        self._note_cancels()

    def _note_cancels(self) -> None:
        """Remember each newly canceled run (and child) as its cancel left it."""
        for run in self.every_run():
            if run.status is RunStatus.CANCELED and run.run_id not in self.after_cancel:
                self.after_cancel[run.run_id] = (run, self.records(run.run_id))

    @rule(
        data=st.data(),
        decision=st.sampled_from([ApprovalDecision.APPROVE, ApprovalDecision.REJECT]),
    )
    def decide(self, data: st.DataObject, decision: ApprovalDecision) -> None:
        approvals = [
            approval
            for run in self.every_run()
            for approval in self.ecp.approvals.for_run(self.tenant, run.run_id)
            if approval.status in (ApprovalStatus.PENDING, ApprovalStatus.WITHDRAWN)
        ]
        if not approvals:
            return
        approval = data.draw(st.sampled_from(approvals))
        request = ApprovalResolutionRequest(decision=decision)
        if approval.status is ApprovalStatus.WITHDRAWN:
            with pytest.raises(ApprovalWithdrawn):
                self.ecp.resolve(self.actor, approval.deployment_ref, approval.approval_id, request)
            return
        with contextlib.suppress(Conflict):  # the run moved on in between (an escalation)
            self.ecp.approvals.resolve(
                self.actor, approval.deployment_ref, approval.approval_id, request
            )

    @rule()
    def claim(self) -> None:
        request = TaskClaimRequest(worker_id="w", topics=(TOPIC,), max_tasks=3)
        claimed = self.ecp.tasks.claim(self.tenant, request)
        self.held.extend(task for task in claimed)

    @precondition(lambda self: bool(self.held))
    @rule(data=st.data(), fail=st.booleans())
    def report(self, data: st.DataObject, fail: bool) -> None:
        self._report(data.draw(st.sampled_from(self.held)), fail=fail)

    @precondition(lambda self: bool(self.held))
    @rule(data=st.data())
    def cancel_while_a_worker_holds_its_task(self, data: st.DataObject) -> None:
        """The run of a claimed task is canceled; its worker reports later (or never)."""
        task = data.draw(st.sampled_from(self.held))
        if self.run(task.run_id).status not in TERMINAL:
            self.ecp.runs.cancel(self.actor, task.run_id, WHY)
            self._note_cancels()

    @rule(fail=st.booleans())
    def claim_and_report(self, fail: bool) -> None:
        """A worker that reports at once on what it claims."""
        self.claim()
        for task in list(self.held):
            self._report(task, fail=fail)

    def _report(self, task: Task, *, fail: bool) -> None:
        assert task.lock_token is not None
        canceled_before = self.run(task.run_id).status is RunStatus.CANCELED
        try:
            if fail:
                request = TaskFailRequest(lock_token=task.lock_token, error="broke")
                self.ecp.tasks.fail(self.tenant, task.task_id, request)
            else:
                done = TaskCompleteRequest(lock_token=task.lock_token, output={"packed": True})
                self.ecp.tasks.complete(self.tenant, task.task_id, done)
        except RunCanceled:
            assert self.run(task.run_id).status is RunStatus.CANCELED
        except LockLost:
            pass  # its lock ran out and another claim took it
        else:
            assert not canceled_before, "a report was applied to a canceled run's task"
        self.held.remove(task)

    @precondition(lambda self: bool(self.runs))
    @rule(data=st.data(), paused=st.booleans())
    def pause_a_run(self, data: st.DataObject, paused: bool) -> None:
        target = data.draw(st.sampled_from(list(self.every_run())))
        if target.status in TERMINAL:
            with pytest.raises(RunFinished):
                self.ecp.runs.pause(self.actor, target.run_id)
            return
        change = self.ecp.runs.pause if paused else self.ecp.runs.unpause
        after = change(self.actor, target.run_id)
        assert (PauseSource.RUN in after.paused_by) is paused

    @rule(ref=st.sampled_from(["leafy", "top"]), paused=st.booleans())
    def pause_a_deployment(self, ref: str, paused: bool) -> None:
        change = self.ecp.runs.pause_deployment if paused else self.ecp.runs.unpause_deployment
        assert change(self.actor, ref).paused is paused
        for run in self.every_run():
            if run.deployment_ref == ref and run.status not in TERMINAL:
                assert (PauseSource.DEPLOYMENT in run.paused_by) is paused

    @rule(seconds=st.sampled_from([5, 31]))
    def time_passes(self, seconds: int) -> None:
        self.clock.advance(seconds)
        self.ecp.tasks.expire_locks()

    @rule()
    def timers_come_due(self) -> None:
        """The timer sweep: every due run wakes, once, never before its time."""
        now = self.clock.now()
        due = {
            run.run_id
            for run in self.every_run()
            if run.status is RunStatus.WAITING_TIMER
            and run.wait_until is not None
            and run.wait_until <= now
        }
        # The store outlives each machine: earlier machines' tenants may have due runs too.
        woken: list[Woken] = []
        while True:
            batch = self.ecp.runs.wake_timers()
            woken.extend(wake for wake in batch if wake.run.tenant_id == self.tenant)
            if len(batch) < WAKE_BATCH:
                break
        assert {wake.run.run_id for wake in woken} == due
        for wake in woken:
            assert wake.due <= wake.woke_at
            assert wake.run.status is RunStatus.RUNNING

    @rule()
    def restart(self) -> None:
        """The process stops and another starts: only what the store holds carries over."""
        self.restarts += 1
        self.ecp = self.service()

    # -- invariants ----------------------------------------------------------------------------

    @invariant()
    def an_ended_run_ended_once(self) -> None:
        """Its status stays, its chain never grows: the record that ended it is its last."""
        for run in self.every_run():
            if run.status not in TERMINAL:
                continue
            count = len(self.records(run.run_id))
            assert count >= 1
            seen = self.ended.setdefault(run.run_id, (run.status, count))
            assert seen == (run.status, count), (run.run_id, seen, run.status, count)

    @invariant()
    def canceled_runs_take_no_further_step(self) -> None:
        for run_id, (run, records) in self.after_cancel.items():
            assert self.run(run_id) == run
            assert self.records(run_id) == records
            assert records[-1].status == AttemptStatus.CANCELED
            assert [r.status for r in records].count(AttemptStatus.CANCELED) == 1

    @invariant()
    def timers_have_their_time_and_none_woke_early(self) -> None:
        for run in self.every_run():
            assert (run.status is RunStatus.WAITING_TIMER) is (run.wait_until is not None)
            for record in self.records(run.run_id):
                metadata = record.execution_metadata
                if record.status == AttemptStatus.SUCCEEDED and record.node_id == "nap":
                    assert isinstance(metadata, dict)
                    assert metadata["woke_at"] >= metadata["wait_until"]

    @invariant()
    def a_canceled_parents_children_are_canceled(self) -> None:
        for run_id in self.after_cancel:
            children, _ = self.ecp.runs.children(self.tenant, run_id, limit=500)
            for child in children:
                assert child.status in TERMINAL

    @invariant()
    def concurrency_limits_are_never_exceeded(self) -> None:
        held = Counter(run.deployment_ref for run in self.every_run() if run.holds_slot)
        limits = {
            ref: self.ecp.graphs.deployment(self.tenant, ref).max_concurrent_runs
            for ref in ("leafy", "top")
        }
        limits[""] = self.ecp.runs.tenant_limits(self.tenant).max_concurrent_runs
        counts = {**{ref: held[ref] for ref in ("leafy", "top")}, "": held.total()}
        for scope, count in counts.items():
            limit, before = limits[scope], self.slots_before.get(scope, 0)
            assert limit is None or count <= max(limit, before), (scope, count, limit, before)
        self.slots_before = counts

    def teardown(self) -> None:
        for run in self.every_run():
            verified = self.ecp.audit.verify_run(self.tenant, run.run_id)
            assert verified.verified, (run.run_id, verified)
            assert verified.signature_verified in (True, None)


def test_run_control_in_memory() -> None:
    store = MemoryStore()

    class OnMemory(ControlMachine):
        uow = store.unit_of_work

    run_state_machine_as_test(OnMemory, settings=MEMORY_SETTINGS)


def test_run_control_on_postgres(postgres_store: PostgresStore) -> None:
    class OnPostgres(ControlMachine):
        uow = postgres_store.unit_of_work

    run_state_machine_as_test(OnPostgres, settings=SETTINGS)
