"""The run port, and what the run lifecycle needs of storage."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ecp_core.ports.approvals import WithApprovals
from ecp_core.ports.audit import WithAudit
from ecp_core.ports.contracts import WithContracts
from ecp_core.ports.deployments import WithDeployments
from ecp_core.ports.graphs import WithGraphs
from ecp_core.ports.policies import WithPolicies
from ecp_core.ports.rollouts import WithRollouts
from ecp_core.ports.tasks import WithTasks
from ecp_core.ports.unit import Transaction
from ecp_core.ports.webhooks import WithWebhooks

if TYPE_CHECKING:
    from datetime import datetime

    from ecp_core.runs.approvals.model import ApprovalRecord
    from ecp_core.runs.run.model import Run, RunClaim
    from ecp_core.runs.run.search import RunFilter


class RunRepository(Protocol):
    """Runs and their checkpoints."""

    def add(self, run: Run) -> None:
        """Store a new run (Conflict when the id or its idempotency key exists).

        A store may send the write with the unit of work's next statement or at commit, and
        report the Conflict there (ADR 0067).
        """
        ...

    def get(self, tenant_id: str, run_id: str) -> Run | None:
        """One run of the tenant, or None."""
        ...

    def lock(self, tenant_id: str, run_id: str) -> Run | None:
        """Like :meth:`get`, holding the run against concurrent writers until commit."""
        ...

    def lock_for_approval(
        self, tenant_id: str, approval_id: str
    ) -> tuple[ApprovalRecord, Run | None] | None:
        """The tenant's approval and its run, the run held as :meth:`lock` holds it.

        None when the tenant has no such approval; the run is None when it is not stored. One
        read where a store can (ADR 0067).
        """
        ...

    def save(self, run: Run) -> None:
        """Replace a stored run (NotFound when absent).

        A store may send the write with the unit of work's next statement or at commit, and
        report NotFound there (ADR 0059).
        """
        ...

    def by_idempotency_key(self, tenant_id: str, deployment_ref: str, key: str) -> Run | None:
        """The run started with this idempotency key, or None."""
        ...

    def page(self, tenant_id: str, *, limit: int, before: str | None = None) -> list[Run]:
        """Up to ``limit`` runs, newest first, older than run id ``before`` when given."""
        ...

    def search(
        self, tenant_id: str, where: RunFilter, *, limit: int, before: str | None = None
    ) -> list[Run]:
        """Up to ``limit`` runs matching every filter of ``where``, newest first.

        Newest first is run id order (code point), descending; older than run id ``before`` when
        given (the console's run list).
        """
        ...

    def count(self, tenant_id: str) -> int:
        """How many runs the tenant has."""
        ...

    def children(
        self, tenant_id: str, parent_run_id: str, *, limit: int, after: str | None = None
    ) -> list[Run]:
        """Up to ``limit`` runs whose parent is ``parent_run_id``, by run id after ``after``."""
        ...

    def runnable(self, limit: int) -> list[Run]:
        """Runs in PENDING or RUNNING, oldest first, across tenants (for dispatch)."""
        ...

    def claim_runnable(self, now: datetime | None = None) -> RunClaim | None:
        """Claim the next run to dispatch, fairly across tenants; locked until the unit of work ends.

        Eligible: PENDING or RUNNING and not backing off at ``now`` (None: no run is backing off).
        A run's *rank* is its place (from 1) among its tenant's eligible runs in id order; only
        the first ``candidates_per_tenant(number of such tenants)`` of each tenant are
        candidates (``ecp_core.runs.engine.dispatch``). A tenant's *last
        service* is its latest claim. The claim takes the candidate no other transaction holds
        with the least (rank, last service with never first, run id) and stamps it as the newest
        claim, so one claim after another visits the tenants in turn, each oldest run first.
        With concurrency limits (ADR 0079): in a tenant that has one, a run that holds no slot
        is eligible only while its tenant and its deployment are under their limits; claimed,
        it is *admitting* (``RunClaim.admitting``): it takes a slot if one is still free, and the
        caller commits without an attempt. Any other claimed run holds a slot from the claim.
        The run itself is not read: :meth:`lock` it next. :meth:`undo_to_claim` later takes the
        unit of work back to just after the claim.
        """
        ...

    def undo_to_claim(self) -> None:
        """Undo what the unit of work did since its last claim, keeping the claim and its hold.

        So a failed attempt is counted before any other worker can claim the run again.
        """
        ...

    def record_dispatch_failure(
        self, tenant_id: str, run_id: str, not_before: datetime, *, counted: bool = True
    ) -> int:
        """Count one more failed dispatch in a row, back off until ``not_before``; the new count.

        ``counted=False`` backs off without counting (the database, not the run, failed).
        Touches only the run's dispatch bookkeeping (never reads its state) and counts as a
        claim for fairness. NotFound when there is no such run.
        """
        ...

    def clear_dispatch_failures(self, tenant_id: str, run_id: str) -> None:
        """Reset the run's failed-dispatch count and backoff (a dispatch went through)."""
        ...

    def lock_header(self, tenant_id: str, run_id: str) -> Run | None:
        """Like :meth:`lock`, reading no JSON payload a run may hold.

        ``state``, ``output``, ``paused``, ``approved_action``, ``metadata``, ``artifacts`` and
        ``error`` come back empty whatever is stored, so a run whose stored data cannot be read
        can still be ended. Write the result back only with :meth:`save_header`.
        """
        ...

    def save_header(self, run: Run) -> None:
        """Write the run's status, node, counters, failure, pause and approvals (NotFound if absent).

        ``state``, ``output``, ``metadata``, ``artifacts`` and ``error`` stay as stored.
        """
        ...

    def pause_deployment_runs(self, tenant_id: str, deployment_ref: str, *, paused: bool) -> int:
        """Add (or remove) the deployment's pause on each of its runs that has not ended.

        Each run keeps its own pause; how many runs changed.
        """
        ...

    def lock_due_timers(self, now: datetime, limit: int) -> list[tuple[str, str]]:
        """(tenant, run id) of up to ``limit`` runs waiting on a timer due at ``now``, held.

        Earliest due first, then by id; each is held as :meth:`lock` holds a run, and a run
        another unit of work holds is skipped, so several processes wake different runs.
        """
        ...

    def earliest_timer(self) -> datetime | None:
        """The earliest due time of any run waiting on a timer (any tenant); None when none waits."""
        ...

    def expired(self, tenant_id: str, updated_before: datetime, limit: int) -> list[Run]:
        """Terminal, not yet erased runs updated before the instant, oldest first.

        Runs an active legal hold covers are left out, so held runs cannot starve the purge,
        and so are child runs with an ancestor that has not ended (ADR 0046).
        """
        ...

    def ids_of(self, tenant_id: str) -> list[str]:
        """Every run id of the tenant, oldest first."""
        ...

    def tenants(self) -> list[str]:
        """Every tenant that has runs."""
        ...


class WithRuns(Protocol):
    """A unit of work that reaches the runs."""

    @property
    def runs(self) -> RunRepository:
        """The runs."""
        ...


class RunsUnit(
    Transaction,
    WithRuns,
    WithGraphs,
    WithDeployments,
    WithPolicies,
    WithContracts,
    WithApprovals,
    WithAudit,
    WithWebhooks,
    WithTasks,
    WithRollouts,
    Protocol,
):
    """Everything a run's step touches: run, graph, policy, approvals, audit, events, tasks."""


__all__ = ["RunRepository", "RunsUnit", "WithRuns"]
