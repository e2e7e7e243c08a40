"""A unit of work that watches what commits: runs started and finished, audit appends, deliveries.

It wraps the store's units of work, so every path that changes a run (the dispatcher, an
approval resolved in a request, a resume, a dispatch failure) is seen the same way, and the core
needs no metrics. A run's status before is what ``lock`` (or ``lock_header``) read; its status
after is what ``save`` (or ``save_header``) wrote. Nothing counts or logs until ``commit`` succeeds.
With tracing on, claims, run writes and audit appends are also told to :mod:`ecp_http.server.observability.tracing`
as they happen (a span shows what was tried, committed or not).
"""

import logging
from collections.abc import Sequence
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Self

from ecp_core.runs.approvals.model import ApprovalRecord
from ecp_core.runs.run.model import Run
from ecp_core.runs.run.state_machine import TERMINAL
from ecp_core.types import RunStatus
from ecp_core.webhooks.model import Delivery, DeliveryStatus

if TYPE_CHECKING:
    from ecp_core.audit.record import ChainHead, NodeAuditRecord, RunChain
    from ecp_core.audit.settings import AuditSettings
    from ecp_core.ports.accounts import IdentityBindingRepository
    from ecp_core.ports.api_keys import ApiKeyRepository
    from ecp_core.ports.approvals import ApprovalRepository
    from ecp_core.ports.attestations import AttestationRepository
    from ecp_core.ports.audit import AuditRepository
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
    from ecp_core.ports.runs import RunRepository
    from ecp_core.ports.tasks import TaskRepository
    from ecp_core.ports.templates import TemplateRepository
    from ecp_core.ports.unit_of_work import EvidenceRepository, UnitOfWork, UnitOfWorkFactory
    from ecp_core.ports.webhooks import WebhookRepository
    from ecp_core.runs.run.model import RunClaim
    from ecp_core.webhooks.health import DeliveryCounts
    from ecp_core.webhooks.model import DeliveryAttempt, WebhookEventType, WebhookSubscription
    from ecp_http.server.observability.metrics import Metrics
    from ecp_http.server.observability.tracing import Tracing

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


# The three watched repositories implement their whole port: the watched methods note what they
# did, every other method forwards by name. No ``__getattr__``: a method the port renames or adds
# is a type error here and in tests/typing/test_observed_matches_ports.py, never a silent gap.


class ObservedRuns:
    """The runs, noting each run's status before (``lock*``) and after (``add``, ``save*``)."""

    __slots__ = ("_inner", "_seen", "_tracing")

    def __init__(self, inner: "RunRepository", seen: _Seen, tracing: "Tracing | None") -> None:
        """Watch ``inner`` into ``seen``; ``tracing`` None traces nothing."""
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
        """Store a new run; a child run is counted at commit."""
        self._inner.add(run)
        if run.parent_run_id is not None:
            self._seen.children.append(run)
        if self._tracing is not None:
            self._tracing.touched(run)

    def claim_runnable(self, now: datetime | None = None) -> "RunClaim | None":
        """Claim the next run to dispatch (traced)."""
        claim = self._inner.claim_runnable(now)
        if claim is not None and self._tracing is not None:
            self._tracing.claimed(claim)
        return claim

    def lock(self, tenant_id: str, run_id: str) -> Run | None:
        """Lock a run, noting its status before."""
        return self._locked(self._inner.lock(tenant_id, run_id))

    def lock_header(self, tenant_id: str, run_id: str) -> Run | None:
        """Lock a run's header, noting its status before."""
        return self._locked(self._inner.lock_header(tenant_id, run_id))

    def lock_for_approval(
        self, tenant_id: str, approval_id: str
    ) -> tuple[ApprovalRecord, Run | None] | None:
        """Lock an approval's run, noting its status before."""
        found = self._inner.lock_for_approval(tenant_id, approval_id)
        return None if found is None else (found[0], self._locked(found[1]))

    def save(self, run: Run) -> None:
        """Replace a run, noting its status after."""
        self._inner.save(run)
        self._saved(run)

    def save_header(self, run: Run) -> None:
        """Replace a run's header, noting its status after."""
        self._inner.save_header(run)
        self._saved(run)

    def get(self, tenant_id: str, run_id: str) -> Run | None:
        """Forwarded."""
        return self._inner.get(tenant_id, run_id)

    def by_idempotency_key(self, tenant_id: str, deployment_ref: str, key: str) -> Run | None:
        """Forwarded."""
        return self._inner.by_idempotency_key(tenant_id, deployment_ref, key)

    def page(self, tenant_id: str, *, limit: int, before: str | None = None) -> list[Run]:
        """Forwarded."""
        return self._inner.page(tenant_id, limit=limit, before=before)

    def count(self, tenant_id: str) -> int:
        """Forwarded."""
        return self._inner.count(tenant_id)

    def children(
        self, tenant_id: str, parent_run_id: str, *, limit: int, after: str | None = None
    ) -> list[Run]:
        """Forwarded."""
        return self._inner.children(tenant_id, parent_run_id, limit=limit, after=after)

    def runnable(self, limit: int) -> list[Run]:
        """Forwarded."""
        return self._inner.runnable(limit)

    def undo_to_claim(self) -> None:
        """Forwarded."""
        self._inner.undo_to_claim()

    def record_dispatch_failure(
        self, tenant_id: str, run_id: str, not_before: datetime, *, counted: bool = True
    ) -> int:
        """Forwarded."""
        return self._inner.record_dispatch_failure(tenant_id, run_id, not_before, counted=counted)

    def clear_dispatch_failures(self, tenant_id: str, run_id: str) -> None:
        """Forwarded."""
        self._inner.clear_dispatch_failures(tenant_id, run_id)

    def expired(self, tenant_id: str, updated_before: datetime, limit: int) -> list[Run]:
        """Forwarded."""
        return self._inner.expired(tenant_id, updated_before, limit)

    def ids_of(self, tenant_id: str) -> list[str]:
        """Forwarded."""
        return self._inner.ids_of(tenant_id)

    def tenants(self) -> list[str]:
        """Forwarded."""
        return self._inner.tenants()


class ObservedAudit:
    """The audit chains, counting appends (and tracing each)."""

    __slots__ = ("_inner", "_seen", "_tracing")

    def __init__(self, inner: "AuditRepository", seen: _Seen, tracing: "Tracing | None") -> None:
        """Watch ``inner`` into ``seen``; ``tracing`` None traces nothing."""
        self._inner = inner
        self._seen = seen
        self._tracing = tracing

    def append(self, record: "NodeAuditRecord") -> "ChainHead":
        """Append a record, counted at commit."""
        if self._tracing is None:
            head = self._inner.append(record)
        else:
            with self._tracing.appending(record):
                head = self._inner.append(record)
        self._seen.audit += 1
        return head

    def head(self, run_id: str) -> "ChainHead | None":
        """Forwarded."""
        return self._inner.head(run_id)

    def for_run(self, tenant_id: str, run_id: str) -> "list[NodeAuditRecord]":
        """Forwarded."""
        return self._inner.for_run(tenant_id, run_id)

    def for_deployment(
        self,
        tenant_id: str,
        deployment_ref: str,
        run_id: str | None = None,
        *,
        limit: int | None = None,
        after: tuple[str, int] | None = None,
    ) -> "list[NodeAuditRecord]":
        """Forwarded."""
        return self._inner.for_deployment(
            tenant_id, deployment_ref, run_id, limit=limit, after=after
        )

    def chain_run_ids(self, tenant_id: str, deployment_ref: str) -> list[str]:
        """Forwarded."""
        return self._inner.chain_run_ids(tenant_id, deployment_ref)

    def chains(self, tenant_id: str, run_ids: Sequence[str]) -> "list[RunChain]":
        """Forwarded."""
        return self._inner.chains(tenant_id, run_ids)

    def get(self, tenant_id: str, audit_id: str) -> "NodeAuditRecord | None":
        """Forwarded."""
        return self._inner.get(tenant_id, audit_id)

    def store_erasure(self, record: "NodeAuditRecord") -> None:
        """Forwarded."""
        self._inner.store_erasure(record)

    def aged(self, tenant_id: str, created_before: datetime, limit: int) -> "list[NodeAuditRecord]":
        """Forwarded."""
        return self._inner.aged(tenant_id, created_before, limit)

    def settings(self, tenant_id: str) -> "AuditSettings | None":
        """Forwarded."""
        return self._inner.settings(tenant_id)

    def save_settings(self, settings: "AuditSettings") -> None:
        """Forwarded."""
        self._inner.save_settings(settings)


class ObservedWebhooks:
    """The webhook outbox, noting each delivery attempt's result."""

    __slots__ = ("_inner", "_seen")

    def __init__(self, inner: "WebhookRepository", seen: _Seen) -> None:
        """Watch ``inner`` into ``seen``."""
        self._inner = inner
        self._seen = seen

    def save_delivery(self, delivery: Delivery) -> None:
        """Replace a delivery; one that was attempted is counted at commit."""
        self._inner.save_delivery(delivery)
        if delivery.attempts > 0:  # an attempt was made (replays are added, not saved)
            self._seen.deliveries.append(_RESULT.get(delivery.status, "retry"))

    def add_subscription(self, subscription: "WebhookSubscription") -> None:
        """Forwarded."""
        self._inner.add_subscription(subscription)

    def subscription(self, tenant_id: str, subscription_id: str) -> "WebhookSubscription | None":
        """Forwarded."""
        return self._inner.subscription(tenant_id, subscription_id)

    def subscriptions(self, tenant_id: str) -> "list[WebhookSubscription]":
        """Forwarded."""
        return self._inner.subscriptions(tenant_id)

    def matching(
        self, tenant_id: str, deployment_ref: str, event_type: "WebhookEventType"
    ) -> "list[WebhookSubscription]":
        """Forwarded."""
        return self._inner.matching(tenant_id, deployment_ref, event_type)

    def delete_subscription(self, tenant_id: str, subscription_id: str) -> bool:
        """Forwarded."""
        return self._inner.delete_subscription(tenant_id, subscription_id)

    def rotate_secret(
        self, tenant_id: str, subscription_id: str, secret: str, previous_expires_at: datetime
    ) -> "WebhookSubscription | None":
        """Forwarded."""
        return self._inner.rotate_secret(tenant_id, subscription_id, secret, previous_expires_at)

    def drop_expired_secrets(self, now: datetime) -> int:
        """Forwarded."""
        return self._inner.drop_expired_secrets(now)

    def add_delivery(self, delivery: Delivery) -> None:
        """Forwarded (a replay is added, not saved: not an attempt)."""
        self._inner.add_delivery(delivery)

    def delivery(self, tenant_id: str, delivery_id: str) -> Delivery | None:
        """Forwarded."""
        return self._inner.delivery(tenant_id, delivery_id)

    def claim_due(self, now: datetime, limit: int) -> list[Delivery]:
        """Forwarded."""
        return self._inner.claim_due(now, limit)

    def add_attempt(self, attempt: "DeliveryAttempt") -> None:
        """Forwarded."""
        self._inner.add_attempt(attempt)

    def attempts(self, tenant_id: str, delivery_id: str) -> "list[DeliveryAttempt]":
        """Forwarded."""
        return self._inner.attempts(tenant_id, delivery_id)

    def dead_letters(
        self, tenant_id: str, *, limit: int, before: str | None = None
    ) -> list[Delivery]:
        """Forwarded."""
        return self._inner.dead_letters(tenant_id, limit=limit, before=before)

    def delivery_counts(self, tenant_id: str, since: datetime) -> "DeliveryCounts":
        """Forwarded."""
        return self._inner.delivery_counts(tenant_id, since)


class ObservedUnitOfWork:
    """The wrapped unit of work: same ports, plus counting and logging on commit.

    ``runs``, ``audit`` and ``webhooks`` are watched (set on entering); every other port is a
    property that returns the inner unit of work's, so :func:`observed` returns this class as a
    :class:`~ecp_core.ports.unit_of_work.UnitOfWork` with no cast and mypy checks the match.
    """

    __slots__ = ("_inner", "_metrics", "_seen", "_tracing", "audit", "runs", "webhooks")
    runs: ObservedRuns
    audit: ObservedAudit
    webhooks: ObservedWebhooks

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
    def templates(self) -> "TemplateRepository":
        """The inner unit of work's ``templates``."""
        return self._inner.templates


def observed(
    factory: "UnitOfWorkFactory", metrics: "Metrics | None", tracing: "Tracing | None" = None
) -> "UnitOfWorkFactory":
    """A factory of watched units of work over ``factory``."""

    def unit_of_work() -> "UnitOfWork":
        return ObservedUnitOfWork(factory(), metrics, tracing)

    return unit_of_work
