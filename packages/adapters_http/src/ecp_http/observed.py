"""A unit of work that watches what commits: runs started and finished, audit appends, deliveries.

It wraps the store's units of work, so every path that changes a run (the dispatcher, an
approval resolved in a request, a resume, a dispatch failure) is seen the same way, and the core
needs no metrics. A run's status before is what ``lock`` (or ``lock_header``) read; its status
after is what ``save`` (or ``save_header``) wrote. Nothing counts or logs until ``commit`` succeeds.
With tracing on, claims, run writes and audit appends are also told to :mod:`ecp_http.tracing`
as they happen (a span shows what was tried, committed or not).
"""

import logging
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, cast

from ecp_core.runs.approvals.model import ApprovalRecord
from ecp_core.runs.run.model import Run
from ecp_core.runs.run.state_machine import TERMINAL
from ecp_core.types import RunStatus
from ecp_core.webhooks.model import Delivery, DeliveryStatus

if TYPE_CHECKING:
    from ecp_core.ports.unit_of_work import UnitOfWork, UnitOfWorkFactory
    from ecp_core.runs.run.model import RunClaim
    from ecp_http.metrics import Metrics
    from ecp_http.tracing import Tracing

log = logging.getLogger("ecp_http.runs")

_RESULT = {DeliveryStatus.DELIVERED: "delivered", DeliveryStatus.DEAD: "dead"}


class _Seen:
    """What one transaction did, kept until it commits."""

    __slots__ = ("audit", "before", "children", "deliveries", "runs")

    def __init__(self) -> None:
        self.before: dict[str, RunStatus] = {}
        self.runs: list[tuple[RunStatus, Run]] = []
        self.children: list[Run] = []
        self.audit = 0
        self.deliveries: list[str] = []


class _Runs:
    def __init__(self, inner: Any, seen: _Seen, tracing: "Tracing | None") -> None:  # noqa: ANN401
        self._inner = inner
        self._seen = seen
        self._tracing = tracing

    def _locked(self, run: Run | None) -> Run | None:
        if run is not None:
            self._seen.before.setdefault(run.run_id, run.status)
        return run

    def _saved(self, run: Run) -> None:
        if self._tracing is not None:
            self._tracing.touched(run)
        before = self._seen.before.get(run.run_id)
        if before is not None:
            self._seen.runs.append((before, run))
            self._seen.before[run.run_id] = run.status

    def add(self, run: Run) -> None:
        self._inner.add(run)
        if run.parent_run_id is not None:
            self._seen.children.append(run)
        if self._tracing is not None:
            self._tracing.touched(run)

    def claim_runnable(self, now: datetime | None = None) -> "RunClaim | None":
        claim: RunClaim | None = self._inner.claim_runnable(now)
        if claim is not None and self._tracing is not None:
            self._tracing.claimed(claim)
        return claim

    def lock(self, tenant_id: str, run_id: str) -> Run | None:
        return self._locked(self._inner.lock(tenant_id, run_id))

    def lock_header(self, tenant_id: str, run_id: str) -> Run | None:
        return self._locked(self._inner.lock_header(tenant_id, run_id))

    def lock_for_approval(
        self, tenant_id: str, approval_id: str
    ) -> tuple[ApprovalRecord, Run | None] | None:
        found = self._inner.lock_for_approval(tenant_id, approval_id)
        return None if found is None else (found[0], self._locked(found[1]))

    def save(self, run: Run) -> None:
        self._inner.save(run)
        self._saved(run)

    def save_header(self, run: Run) -> None:
        self._inner.save_header(run)
        self._saved(run)

    def __getattr__(self, name: str) -> Any:  # noqa: ANN401
        return getattr(self._inner, name)


class _Audit:
    def __init__(self, inner: Any, seen: _Seen, tracing: "Tracing | None") -> None:  # noqa: ANN401
        self._inner = inner
        self._seen = seen
        self._tracing = tracing

    def append(self, record: Any) -> Any:  # noqa: ANN401
        if self._tracing is None:
            head = self._inner.append(record)
        else:
            with self._tracing.appending(record):
                head = self._inner.append(record)
        self._seen.audit += 1
        return head

    def __getattr__(self, name: str) -> Any:  # noqa: ANN401
        return getattr(self._inner, name)


class _Webhooks:
    def __init__(self, inner: Any, seen: _Seen) -> None:  # noqa: ANN401
        self._inner = inner
        self._seen = seen

    def save_delivery(self, delivery: Delivery) -> None:
        self._inner.save_delivery(delivery)
        if delivery.attempts > 0:  # an attempt was made (replays are added, not saved)
            self._seen.deliveries.append(_RESULT.get(delivery.status, "retry"))

    def __getattr__(self, name: str) -> Any:  # noqa: ANN401
        return getattr(self._inner, name)


class ObservedUnitOfWork:
    """The wrapped unit of work: same ports, plus counting and logging on commit."""

    def __init__(
        self, inner: "UnitOfWork", metrics: "Metrics | None", tracing: "Tracing | None" = None
    ) -> None:
        """Watch ``inner``; ``metrics`` None logs only; ``tracing`` None traces nothing."""
        self._inner = inner
        self._metrics = metrics
        self._tracing = tracing
        self._seen = _Seen()

    def __enter__(self) -> Self:
        """Begin the inner unit of work and wrap the ports that are watched."""
        inner = self._inner.__enter__()
        self._inner = inner
        self.runs = _Runs(inner.runs, self._seen, self._tracing)
        self.audit = _Audit(inner.audit, self._seen, self._tracing)
        self.webhooks = _Webhooks(inner.webhooks, self._seen)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Forget what was not committed and leave the inner unit of work."""
        self._seen = _Seen()
        self._inner.__exit__(exc_type, exc, tb)

    def commit(self) -> None:
        """Commit, then count and log what the transaction did."""
        self._inner.commit()
        seen, self._seen = self._seen, _Seen()
        self._seen.before = {run.run_id: run.status for _, run in seen.runs}
        self._report(seen)

    def _report(self, seen: _Seen) -> None:
        metrics = self._metrics
        for before, run in seen.runs:
            if before is RunStatus.PENDING and run.status is not RunStatus.PENDING:
                if metrics is not None:
                    metrics.runs_started.inc()
                log.info("run started", extra={"run_id": run.run_id, "tenant_id": run.tenant_id})
            if before not in TERMINAL and run.status in TERMINAL:
                status = run.public_status.value
                if metrics is not None:
                    metrics.runs_finished.labels(status).inc()
                log.info(
                    "run finished",
                    extra={"run_id": run.run_id, "tenant_id": run.tenant_id, "status": status},
                )
        self._report_children(seen.children)
        if metrics is not None:
            if seen.audit:
                metrics.audit_records.inc(seen.audit)
            for result in seen.deliveries:
                metrics.webhook_deliveries.labels(result).inc()

    def _report_children(self, children: list[Run]) -> None:
        """Count and log the child runs subgraph nodes started (ADR 0046)."""
        for child in children:
            if self._metrics is not None:
                self._metrics.child_runs_started.inc()
            facts = {"run_id": child.run_id, "parent_run_id": child.parent_run_id}
            log.info("child run started", extra={**facts, "tenant_id": child.tenant_id})

    def __getattr__(self, name: str) -> Any:  # noqa: ANN401
        """Every other port, unwrapped."""
        return getattr(self._inner, name)


def observed(
    factory: "UnitOfWorkFactory", metrics: "Metrics | None", tracing: "Tracing | None" = None
) -> "UnitOfWorkFactory":
    """A factory of watched units of work over ``factory``."""

    def unit_of_work() -> "UnitOfWork":
        return cast("UnitOfWork", ObservedUnitOfWork(factory(), metrics, tracing))

    return unit_of_work
