"""A unit of work that watches what commits: runs started and finished, audit appends, deliveries.

It wraps the store's units of work, so every path that changes a run (the dispatcher, an
approval resolved in a request, a resume, a dispatch failure) is seen the same way, and the core
needs no metrics. A run's status before is what ``lock`` (or ``lock_header``) read; its status
after is what ``save`` (or ``save_header``) wrote. Nothing counts or logs until ``commit`` succeeds.
With tracing on, claims, run writes and audit appends are also told to :mod:`ecp_http.server.observability.tracing`
as they happen (a span shows what was tried, committed or not). The watched repositories, and
what one transaction saw, are in :mod:`ecp_http.server.observability.watched`.
"""

import logging
from types import TracebackType
from typing import TYPE_CHECKING, Self

from ecp_core.runs.run.model import Run
from ecp_core.runs.run.state_machine import TERMINAL
from ecp_core.types import RunStatus
from ecp_http.server.observability.watched import (
    ObservedAudit,
    ObservedRuns,
    ObservedWebhooks,
    Seen,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from ecp_core.ports.accounts import IdentityBindingRepository
    from ecp_core.ports.api_keys import ApiKeyRepository
    from ecp_core.ports.approvals import ApprovalRepository
    from ecp_core.ports.attestations import AttestationRepository
    from ecp_core.ports.backtests import BacktestRepository
    from ecp_core.ports.billing import MerchantEventRepository, SubscriptionRepository
    from ecp_core.ports.certification import CertificationRepository
    from ecp_core.ports.connectors import ConnectorCostRepository, ConnectorRepository
    from ecp_core.ports.contracts import ContractRepository
    from ecp_core.ports.decisions import DecisionRepository
    from ecp_core.ports.deployments import DeploymentRepository
    from ecp_core.ports.entitlements import MeterRepository
    from ecp_core.ports.graphs import GraphRepository
    from ecp_core.ports.policies import PolicyRepository
    from ecp_core.ports.reconciliation import ReconciliationRepository
    from ecp_core.ports.retention import RetentionRepository
    from ecp_core.ports.rollouts import RolloutRepository
    from ecp_core.ports.tasks import TaskRepository
    from ecp_core.ports.templates import TemplateRepository
    from ecp_core.ports.transparency import TransparencyRepository
    from ecp_core.ports.unit_of_work import EvidenceRepository, UnitOfWork, UnitOfWorkFactory
    from ecp_http.server.observability.metrics import Metrics
    from ecp_http.server.observability.tracing import Tracing

log = logging.getLogger("ecp_http.runs")


class ObservedUnitOfWork:
    """The wrapped unit of work: same ports, plus counting and logging on commit.

    ``runs``, ``audit`` and ``webhooks`` are watched (set on entering); every other port is a
    property that returns the inner unit of work's, so :func:`observed` returns this class as a
    :class:`~ecp_core.ports.unit_of_work.UnitOfWork` with no cast and mypy checks the match.
    """

    __slots__ = (
        "_deferred",
        "_inner",
        "_metrics",
        "_on_audit",
        "_seen",
        "_tracing",
        "audit",
        "runs",
        "webhooks",
    )
    runs: ObservedRuns
    audit: ObservedAudit
    webhooks: ObservedWebhooks

    def __init__(
        self,
        inner: "UnitOfWork",
        metrics: "Metrics | None",
        tracing: "Tracing | None" = None,
        on_audit: "Callable[[], object] | None" = None,
        deferred: "list[tuple[ObservedUnitOfWork, Seen]] | None" = None,
    ) -> None:
        """Watch ``inner``; ``metrics`` None logs only; ``tracing`` None traces nothing.

        ``on_audit`` is called after a commit that appended audit records (the log thread's cue).
        With ``deferred`` (a savepoint of a shared transaction), a commit adds what it saw
        there, for the shared commit to settle (:meth:`committed`) once it is durable.
        """
        self._inner = inner
        self._metrics = metrics
        self._tracing = tracing
        self._on_audit = on_audit
        self._seen = Seen()
        self._deferred = deferred

    def __enter__(self) -> Self:
        """Begin the inner unit of work and wrap the ports that are watched."""
        inner = self._inner.__enter__()
        self._inner = inner
        self.runs = ObservedRuns(inner.runs, self._seen, self._tracing)
        self.audit = ObservedAudit(inner.audit, self._seen, self._tracing)
        self.webhooks = ObservedWebhooks(inner.webhooks, self._seen)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Forget what was not committed and leave the inner unit of work."""
        self._seen = Seen()
        self._inner.__exit__(exc_type, exc, tb)

    def commit(self) -> None:
        """Commit, then count and log what the transaction did."""
        self._inner.commit()
        seen, self._seen = self._seen, Seen()
        self._seen.before = {run.run_id: run.status for _, run in seen.runs}
        if self._deferred is None:
            self.committed(seen)
        else:
            self._deferred.append((self, seen))

    def committed(self, seen: Seen) -> None:
        """What follows a durable commit: the log thread's cue, then the count and the log."""
        if seen.audit and self._on_audit is not None:
            self._on_audit()
        self.report(seen)

    def report(self, seen: Seen) -> None:
        """Count and log what a committed transaction did."""
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

    # Every other port, unwatched: the inner unit of work's own.

    @property
    def identity_bindings(self) -> "IdentityBindingRepository":
        """The inner unit of work's ``identity_bindings``."""
        return self._inner.identity_bindings

    @property
    def api_keys(self) -> "ApiKeyRepository":
        """The inner unit of work's ``api_keys``."""
        return self._inner.api_keys

    @property
    def approvals(self) -> "ApprovalRepository":
        """The inner unit of work's ``approvals``."""
        return self._inner.approvals

    @property
    def attestations(self) -> "AttestationRepository":
        """The inner unit of work's ``attestations``."""
        return self._inner.attestations

    @property
    def backtests(self) -> "BacktestRepository":
        """The inner unit of work's ``backtests``."""
        return self._inner.backtests

    @property
    def certifications(self) -> "CertificationRepository":
        """The inner unit of work's ``certifications``."""
        return self._inner.certifications

    @property
    def connectors(self) -> "ConnectorRepository":
        """The inner unit of work's ``connectors``."""
        return self._inner.connectors

    @property
    def connector_costs(self) -> "ConnectorCostRepository":
        """The inner unit of work's ``connector_costs``."""
        return self._inner.connector_costs

    @property
    def contracts(self) -> "ContractRepository":
        """The inner unit of work's ``contracts``."""
        return self._inner.contracts

    @property
    def decisions(self) -> "DecisionRepository":
        """The inner unit of work's ``decisions``."""
        return self._inner.decisions

    @property
    def deployments(self) -> "DeploymentRepository":
        """The inner unit of work's ``deployments``."""
        return self._inner.deployments

    @property
    def evidence(self) -> "EvidenceRepository":
        """The inner unit of work's ``evidence``."""
        return self._inner.evidence

    @property
    def graphs(self) -> "GraphRepository":
        """The inner unit of work's ``graphs``."""
        return self._inner.graphs

    @property
    def merchant_events(self) -> "MerchantEventRepository":
        """The inner unit of work's ``merchant_events``."""
        return self._inner.merchant_events

    @property
    def meters(self) -> "MeterRepository":
        """The inner unit of work's ``meters``."""
        return self._inner.meters

    @property
    def policies(self) -> "PolicyRepository":
        """The inner unit of work's ``policies``."""
        return self._inner.policies

    @property
    def reconciliation(self) -> "ReconciliationRepository":
        """The inner unit of work's ``reconciliation``."""
        return self._inner.reconciliation

    @property
    def retention(self) -> "RetentionRepository":
        """The inner unit of work's ``retention``."""
        return self._inner.retention

    @property
    def subscriptions(self) -> "SubscriptionRepository":
        """The inner unit of work's ``subscriptions``."""
        return self._inner.subscriptions

    @property
    def tasks(self) -> "TaskRepository":
        """The inner unit of work's ``tasks``."""
        return self._inner.tasks

    @property
    def rollouts(self) -> "RolloutRepository":
        """The inner unit of work's ``rollouts``."""
        return self._inner.rollouts

    @property
    def templates(self) -> "TemplateRepository":
        """The inner unit of work's ``templates``."""
        return self._inner.templates

    @property
    def transparency(self) -> "TransparencyRepository":
        """The inner unit of work's ``transparency``."""
        return self._inner.transparency


def observed(
    factory: "UnitOfWorkFactory",
    metrics: "Metrics | None",
    tracing: "Tracing | None" = None,
    on_audit: "Callable[[], object] | None" = None,
) -> "UnitOfWorkFactory":
    """A factory of watched units of work over ``factory`` (``on_audit``: see the unit)."""

    def unit_of_work() -> "UnitOfWork":
        return ObservedUnitOfWork(factory(), metrics, tracing, on_audit)

    return unit_of_work


__all__ = ["ObservedUnitOfWork", "observed"]
