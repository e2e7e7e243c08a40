"""Use cases for runs: start, advance one attempt, drive to a pause or end, resume, read."""

import logging
from collections.abc import Callable
from typing import Any

from ecp_core.canonical import canonical_json, thaw
from ecp_core.deployments.model import Deployment, LimitsRequest, TenantLimits
from ecp_core.errors import (
    Conflict,
    DatabaseUnavailable,
    FieldError,
    IllegalTransition,
    NotFound,
    ValidationFailed,
)
from ecp_core.evolve import evolve
from ecp_core.graphs.paths import set_path
from ecp_core.identity import ActorIdentity
from ecp_core.pages import MAX_PAGE, check_limit, decode_cursor, next_page
from ecp_core.ports.runs import RunsUnit
from ecp_core.ports.shared import SharedTransactions
from ecp_core.ports.system import Clock, IdFactory
from ecp_core.registry.service import require_graph
from ecp_core.runs.children.targets import CHILDREN_CURSOR, child_target
from ecp_core.runs.engine.commit_groups import CommitGroup
from ecp_core.runs.engine.control import RunControl
from ecp_core.runs.engine.dispatch import DISPATCH_RETRY
from ecp_core.runs.engine.failures import DispatchFailures
from ecp_core.runs.engine.lifecycle import RunLifecycle
from ecp_core.runs.engine.limits import RunLimits
from ecp_core.runs.engine.migration import RunMigrations
from ecp_core.runs.engine.starts import FirstAttemptsFailed, RunStarts
from ecp_core.runs.engine.step import Stepper
from ecp_core.runs.engine.timers import WAKE_BATCH, TimerWakes, Woken
from ecp_core.runs.run.attempts import AttemptRecord
from ecp_core.runs.run.migration import (
    MigrateRunRequest,
    MigrateVersionRequest,
    MigrateVersionResponse,
)
from ecp_core.runs.run.model import (
    CancelRunRequest,
    PauseRequest,
    Run,
    RunClaim,
    StartRunRequest,
)
from ecp_core.runs.run.search import SEARCH_CURSOR, RunFilter
from ecp_core.runs.run.state_machine import TERMINAL, WAITING
from ecp_core.types import AttemptStatus, RunStatus
from ecp_core.webhooks.schedule import RetrySchedule

log = logging.getLogger("ecp_core.runs")

CHAINED_ATTEMPTS = 16
"""At most this many further attempts share one transaction (a claim stays short and fair)."""


def _database_unavailable(exc: BaseException) -> bool:
    """Whether ``exc`` is the core's own word for the database being away or full."""
    return isinstance(exc, DatabaseUnavailable)


class RunService:
    """Starts and advances runs. Each node attempt is one unit of work."""

    def __init__(
        self,
        uow: Callable[[], RunsUnit],
        clock: Clock,
        ids: IdFactory,
        stepper: Stepper,
        lifecycle: RunLifecycle,
        *,
        dispatch: RetrySchedule = DISPATCH_RETRY,
        storage_unavailable: Callable[[BaseException], bool] | None = None,
        shared_transactions: SharedTransactions | None = None,
    ) -> None:
        """Wire the service; ``dispatch`` bounds and spaces the retries of a failing dispatch.

        ``storage_unavailable`` tells an error of the database being away or full (which backs
        a run off without counting against it) from others; by default the core's own
        :class:`DatabaseUnavailable`. With ``shared_transactions``, concurrent starts share
        commits (ADR 0102).
        """
        self._uow = uow
        self._unavailable = storage_unavailable or _database_unavailable
        self._clock = clock
        self._ids = ids
        self._stepper = stepper
        self._lifecycle = lifecycle
        self._dispatch = dispatch
        self._control = RunControl(uow, clock, lifecycle)
        self._migrations = RunMigrations(uow, clock, lifecycle)
        self._limits = RunLimits(uow)
        self._failures = DispatchFailures(clock, stepper, lifecycle, dispatch)
        self._timers = TimerWakes(uow, clock, stepper, lifecycle)
        group = None if shared_transactions is None else CommitGroup(shared_transactions, alone=uow)
        self.start_group = group
        """The starts' commit group (None: each start commits alone)."""
        self.starts = RunStarts(uow, clock, ids, self._first_attempts, group)
        """Run starts, also prepared and made together by a run worker (ADR 0106)."""

    def wake_timers(self, limit: int = WAKE_BATCH) -> list[Woken]:
        """Wake up to ``limit`` runs whose wait node's time came (see :class:`TimerWakes`)."""
        return self._timers.wake_due(limit)

    def seconds_to_next_timer(self) -> float | None:
        """Seconds until the earliest waiting timer is due (0 if it is); None when none waits."""
        return self._timers.seconds_to_next()

    def cancel(self, actor: ActorIdentity, run_id: str, request: CancelRunRequest) -> Run:
        """Cancel the run and the runs it started (see :class:`RunControl`); the run after it."""
        return self._control.cancel(actor, run_id, request)

    def migrate(self, actor: ActorIdentity, run_id: str, request: MigrateRunRequest) -> Run:
        """Move a waiting run to another version of its graph (see :class:`RunMigrations`)."""
        return self._migrations.migrate(actor, run_id, request)

    def migrate_version(
        self, actor: ActorIdentity, request: MigrateVersionRequest
    ) -> MigrateVersionResponse:
        """Move a page of one version's waiting runs to another version; each run's outcome."""
        return self._migrations.migrate_version(actor, request)

    def pause(self, actor: ActorIdentity, run_id: str, request: PauseRequest | None = None) -> Run:
        """Pause the run's dispatch (see :class:`RunControl`); the run after it."""
        return self._control.pause(actor, run_id, request, paused=True)

    def unpause(
        self, actor: ActorIdentity, run_id: str, request: PauseRequest | None = None
    ) -> Run:
        """Lift the run's own pause (its deployment's stays); the run after it."""
        return self._control.pause(actor, run_id, request, paused=False)

    def pause_deployment(
        self, actor: ActorIdentity, deployment_ref: str, request: PauseRequest | None = None
    ) -> Deployment:
        """Pause a deployment: it queues new runs and dispatches none of its runs."""
        return self._control.pause_deployment(actor, deployment_ref, request, paused=True)

    def unpause_deployment(
        self, actor: ActorIdentity, deployment_ref: str, request: PauseRequest | None = None
    ) -> Deployment:
        """Unpause a deployment: its runs are dispatched again, oldest first."""
        return self._control.pause_deployment(actor, deployment_ref, request, paused=False)

    def set_deployment_limit(
        self, actor: ActorIdentity, deployment_ref: str, request: LimitsRequest
    ) -> Deployment:
        """Set (or lift) how many of the deployment's runs run at once (see :class:`RunLimits`)."""
        return self._limits.set_deployment_limit(actor, deployment_ref, request)

    def set_tenant_limit(self, actor: ActorIdentity, request: LimitsRequest) -> TenantLimits:
        """Set (or lift) how many of the tenant's runs run at once, over all its deployments."""
        return self._limits.set_tenant_limit(actor, request)

    def tenant_limits(self, tenant_id: str) -> TenantLimits:
        """The tenant's own limits."""
        return self._limits.tenant_limits(tenant_id)

    def start(
        self,
        tenant_id: str,
        request: StartRunRequest,
        *,
        started_by: str | None = None,
        first_attempts: bool = False,
    ) -> tuple[Run, bool]:
        """Create a PENDING run; with an idempotency key, a repeat returns the first run.

        Returns the run and whether it was created. A repeat of a key with a different request is
        a Conflict. The run input must be canonical JSON. ``started_by`` is the subject starting
        it, recorded on the run (four-eyes approval rules compare it, ADR 0075). With
        ``first_attempts`` the run's first attempts that change nothing outside it commit with its
        creation, as in :meth:`start_and_drive`, which then drives no further (ADR 0099).
        """
        return self.starts.start(
            tenant_id, request, first_attempts=first_attempts, started_by=started_by
        )

    def start_and_drive(
        self, tenant_id: str, request: StartRunRequest, *, started_by: str | None = None
    ) -> tuple[Run, bool]:
        """Start a run as :meth:`start` does, then drive it until it waits or ends.

        The new run's first attempts that change nothing outside it (structural nodes, actions
        registered ``side_effect: none``; at most :data:`CHAINED_ATTEMPTS`) commit with its
        creation, so a run that reaches an approval that way costs one transaction (ADR 0067).
        An action with effects, and whatever follows it, runs only once the run is stored, as in
        :meth:`drive`. Should those first attempts raise, the run is started alone and driven as
        usual. A repeated idempotency key drives the first run (which may have moved on).
        """
        run, created = self.starts.start(
            tenant_id, request, first_attempts=True, started_by=started_by
        )
        if run.status in TERMINAL or run.status in WAITING:
            return run, created
        return self.drive(tenant_id, run.run_id), created

    def _first_attempts(self, uow: RunsUnit, run: Run) -> Run:
        """Attempt a run just added, in its start's unit of work, while nothing leaves the run.

        Any error but a lost database or a Conflict becomes :class:`FirstAttemptsFailed`; a
        Conflict here is the run's own insert refused (a store may send it with a read the
        attempts make), which :class:`RunStarts` answers like any other.
        """
        try:
            # The lock of the run this transaction just added reads what its attempts need.
            run = uow.runs.lock(run.tenant_id, run.run_id) or run
            slotted = self._with_slot(uow, run)
            if slotted is None:
                return run  # its tenant has limits: the claim admits it (ADR 0079)
            run = self._lifecycle.apply(uow, self._stepper.start(slotted))
            run = self.continue_in(uow, run, effects=False)
            uow.runs.save(run)
        except (DatabaseUnavailable, Conflict):
            raise
        except Exception as exc:
            raise FirstAttemptsFailed from exc
        return run

    def advance(self, tenant_id: str, run_id: str) -> Run:
        """Make one node attempt if the run is PENDING or RUNNING; otherwise return it as it is."""
        with self._uow() as uow:
            run = uow.runs.lock(tenant_id, run_id)
            if run is None:
                raise NotFound(f"run {run_id} not found")
            return self._attempt(uow, run)

    def advance_next(self) -> Run | None:
        """Claim the next runnable run (tenants in turn) and make one attempt on it.

        Returns the run after the attempt, or None when nothing is claimable. Several processes
        sharing one database never work on the same run at once. When loading or attempting the
        claimed run raises, the attempt is undone and the failure counted against the run, which
        backs off or, at the last attempt, ends FAILED with ``dispatch_error`` (ADR 0019); the
        return value is then the run's header, its state unread. An error before a run is
        claimed propagates.
        """
        with self._uow() as uow:
            claim = uow.runs.claim_runnable(self._clock.now())
            if claim is None:
                return None
            if claim.admitting:  # a slot taken (or not) under a limit: committed at once
                admitted = uow.runs.lock_header(claim.tenant_id, claim.run_id)
                uow.commit()
                return admitted
            try:
                if claim.dispatch_failures:
                    uow.runs.clear_dispatch_failures(claim.tenant_id, claim.run_id)
                run = uow.runs.lock(claim.tenant_id, claim.run_id)  # held since the claim
                return None if run is None else self._attempt(uow, run)
            except Exception as exc:  # any error: counted against the run, never lost
                facts = {"run_id": claim.run_id, "tenant_id": claim.tenant_id}
                log.warning(
                    "run dispatch failed",
                    exc_info=exc,
                    extra={**facts, "dispatch_attempt": claim.dispatch_failures + 1},
                )
                # The database refusing the work (full, restarting) is not the run's failure:
                # back off without counting, so no such spell ends a run with dispatch_error.
                counted = not self._unavailable(exc)
                if counted:
                    try:
                        # Still holding the claim, so no other worker retries before the backoff.
                        uow.runs.undo_to_claim()
                    except Exception:  # noqa: BLE001 - the transaction itself is gone
                        # The connection broke, not the run (the database went away): back off
                        # without counting, so an outage never ends a run with dispatch_error.
                        log.warning("run dispatch lost its transaction", extra=facts)
                        counted = False
                    else:
                        try:
                            return self._failures.count(uow, claim, exc)
                        except Exception:  # the fallback below still counts and backs off
                            log.exception(
                                "counting a failed dispatch failed; counting afresh", extra=facts
                            )
        return self._back_off(claim, counted=counted)

    def _back_off(self, claim: RunClaim, *, counted: bool) -> Run | None:
        """Back the claimed run off (and count the failure) in a unit of work of its own."""
        with self._uow() as uow:
            uow.runs.record_dispatch_failure(
                claim.tenant_id, claim.run_id, self._failures.not_before(claim), counted=counted
            )
            uow.commit()
            return uow.runs.lock_header(claim.tenant_id, claim.run_id)

    def _with_slot(self, uow: RunsUnit, run: Run) -> Run | None:
        """``run`` holding a concurrency slot, for an attempt; None: it waits for the claim.

        A run that holds one keeps it. Otherwise it takes one here only when neither its tenant
        nor any deployment of it has a limit; else only the claim admits it, under the limits
        (ADR 0079), and the attempt is left to the dispatcher.
        """
        if run.holds_slot:
            return run
        if uow.deployments.limited(run.tenant_id):
            return None
        return evolve(run, holds_slot=True)

    def _attempt(self, uow: RunsUnit, run: Run) -> Run:
        if run.paused_by:
            return run  # paused: nothing is attempted until it is unpaused
        if run.dispatchable:
            slotted = self._with_slot(uow, run)
            if slotted is None:
                return run  # no slot under its limits: the claim admits it (ADR 0079)
            run = slotted
        run = self._lifecycle.apply(uow, self._stepper.start(run))
        if run.status is not RunStatus.RUNNING:
            return run
        run = self.continue_in(uow, run)
        uow.runs.save(run)
        uow.commit()
        return run

    def continue_in(self, uow: RunsUnit, run: Run, *, effects: bool = True) -> Run:
        """Attempt ``run``'s next node in the caller's unit of work, and more while that is safe.

        After an attempt whose node changed nothing outside the run, the next one joins the same
        transaction (ADR 0059), up to :data:`CHAINED_ATTEMPTS` in all: an attempt with side
        effects is always the last before the commit, so a failure later never repeats it; with
        ``effects=False`` none is made (a run being started, ADR 0067). Stops when the run pauses
        or ends, or when it holds no concurrency slot and may not take one here (ADR 0079: the
        claim admits it). The caller saves the run and commits.
        """
        if run.dispatchable:
            slotted = self._with_slot(uow, run)
            if slotted is None:
                return run
            run = slotted
        for _ in range(CHAINED_ATTEMPTS):
            if run.status is not RunStatus.RUNNING or run.paused_by:
                return run
            graph = require_graph(uow, run.tenant_id, run.graph_version_ref)
            node = graph.node(run.next_node_id or graph.entry)
            if not effects and not self._stepper.keeps_to_the_run(node):
                return run
            policy = uow.policies.get(run.tenant_id, run.deployment_ref)
            child = child_target(uow, run, graph)
            run = self._lifecycle.apply(uow, self._stepper.attempt(run, graph, policy, child))
            if not self._stepper.keeps_to_the_run(node):
                return run
        return run

    def drive(self, tenant_id: str, run_id: str) -> Run:
        """Advance until the run waits, ends, is paused or waits for a slot under its limits.

        The graph's step bound guarantees an end; a run left without a slot is the dispatcher's.
        """
        while True:
            run = self.advance(tenant_id, run_id)
            done = run.status in TERMINAL or run.status in WAITING
            if done or run.paused_by or not run.holds_slot:
                return run

    def resume(self, tenant_id: str, run_id: str, value: Any) -> Run:  # noqa: ANN401
        """Leave WAITING_INTERRUPT: write ``value`` at the node's target path and move on."""
        canonical_json(value)
        with self._uow() as uow:
            run = uow.runs.lock(tenant_id, run_id)
            if run is None:
                raise NotFound(f"run {run_id} not found")
            if run.status is not RunStatus.WAITING_INTERRUPT or run.next_node_id is None:
                raise IllegalTransition(
                    f"run {run_id} is {run.public_status.value}, not waiting for an interrupt"
                )
            graph = require_graph(uow, tenant_id, run.graph_version_ref)
            node = graph.node(run.next_node_id)
            target = node.target_path or node.id
            record = AttemptRecord(
                node_id=node.id,
                status=AttemptStatus.RESUMED,
                input_snapshot=thaw(value),
                output_snapshot={target: thaw(value)},
                execution_metadata={"node_kind": str(node.kind), "target_path": target},
            )
            step = self._stepper.move_on(
                run, graph, record, set_path(run.state, target, thaw(value))
            )
            run = self._lifecycle.apply(uow, step)
            uow.runs.save(run)
            uow.commit()
        return run

    def get(self, tenant_id: str, run_id: str) -> Run:
        """One run of the tenant; NotFound otherwise."""
        with self._uow() as uow:
            run = uow.runs.get(tenant_id, run_id)
        if run is None:
            raise NotFound(f"run {run_id} not found")
        return run

    def page(
        self, tenant_id: str, *, limit: int = 50, cursor: str | None = None
    ) -> tuple[list[Run], int, str | None]:
        """A page of runs, newest first: the runs, the tenant's total, and the next cursor."""
        if not 1 <= limit <= MAX_PAGE:
            raise ValidationFailed(
                "invalid limit", errors=[FieldError(loc=("limit",), msg=f"must be 1 to {MAX_PAGE}")]
            )
        before = None if cursor is None else decode_cursor("runs", cursor, 1)[0]
        with self._uow() as uow:
            runs = uow.runs.page(tenant_id, limit=limit + 1, before=before)
            total = uow.runs.count(tenant_id)
        page, next_cursor = next_page(runs, limit, "runs", lambda run: (run.run_id,))
        return page, total, next_cursor

    def search(
        self, tenant_id: str, where: RunFilter, *, limit: int = 25, cursor: str | None = None
    ) -> tuple[list[Run], str | None]:
        """A page of the runs ``where`` admits, newest first, and the next cursor (or None)."""
        check_limit(limit)
        before = None if cursor is None else decode_cursor(SEARCH_CURSOR, cursor, 1)[0]
        with self._uow() as uow:
            found = uow.runs.search(tenant_id, where, limit=limit + 1, before=before)
        return next_page(found, limit, SEARCH_CURSOR, lambda run: (run.run_id,))

    def children(
        self, tenant_id: str, run_id: str, *, limit: int = 50, cursor: str | None = None
    ) -> tuple[list[Run], str | None]:
        """A page of the child runs ``run_id`` started, oldest first, and the next cursor.

        NotFound when the tenant has no such run (another tenant's run included).
        """
        check_limit(limit)
        after = None if cursor is None else decode_cursor(CHILDREN_CURSOR, cursor, 1)[0]
        with self._uow() as uow:
            if uow.runs.get(tenant_id, run_id) is None:
                raise NotFound(f"run {run_id} not found")
            found = uow.runs.children(tenant_id, run_id, limit=limit + 1, after=after)
        return next_page(found, limit, CHILDREN_CURSOR, lambda run: (run.run_id,))

    def runnable(self, limit: int = 100) -> list[Run]:
        """Runs a dispatcher should advance, oldest first."""
        with self._uow() as uow:
            return uow.runs.runnable(limit)
