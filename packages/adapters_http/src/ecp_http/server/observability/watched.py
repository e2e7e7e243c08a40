"""The watched repositories: runs, audit chains and the webhook outbox, noting what they did.

Each implements its whole port: the watched methods note into :class:`Seen` (what one
transaction did) and tell :mod:`ecp_http.server.observability.tracing` as they happen; every other
method forwards by name. :class:`~ecp_http.server.observability.observed.ObservedUnitOfWork` sets
them on entering, and counts and logs what they saw once the transaction commits.
"""

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from ecp_core.runs.approvals.model import ApprovalRecord
from ecp_core.runs.run.model import Run
from ecp_core.runs.run.search import RunFilter
from ecp_core.webhooks.model import Delivery, DeliveryStatus

if TYPE_CHECKING:
    from ecp_core.audit.record import ChainHead, NodeAuditRecord, RunChain
    from ecp_core.audit.settings import AuditSettings
    from ecp_core.ports.audit import AuditRepository
    from ecp_core.ports.runs import RunRepository
    from ecp_core.ports.webhooks import WebhookRepository
    from ecp_core.runs.run.model import RunClaim
    from ecp_core.types import RunStatus
    from ecp_core.webhooks.health import DeliveryCounts, EndpointHealth
    from ecp_core.webhooks.model import DeliveryAttempt, WebhookEventType, WebhookSubscription
    from ecp_http.server.observability.tracing import Tracing

_RESULT = {DeliveryStatus.DELIVERED: "delivered", DeliveryStatus.DEAD: "dead"}


class Seen:
    """What one transaction did, kept until it commits."""

    __slots__ = ("audit", "before", "children", "deliveries", "runs")

    def __init__(self) -> None:
        """Nothing seen yet."""
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

    def __init__(self, inner: "RunRepository", seen: Seen, tracing: "Tracing | None") -> None:
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

    def search(
        self, tenant_id: str, where: RunFilter, *, limit: int, before: str | None = None
    ) -> list[Run]:
        """Forwarded."""
        return self._inner.search(tenant_id, where, limit=limit, before=before)

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

    def pause_deployment_runs(self, tenant_id: str, deployment_ref: str, *, paused: bool) -> int:
        """Forwarded."""
        return self._inner.pause_deployment_runs(tenant_id, deployment_ref, paused=paused)

    def lock_due_timers(self, now: datetime, limit: int) -> list[tuple[str, str]]:
        """Forwarded."""
        return self._inner.lock_due_timers(now, limit)

    def earliest_timer(self) -> datetime | None:
        """Forwarded."""
        return self._inner.earliest_timer()

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

    def __init__(self, inner: "AuditRepository", seen: Seen, tracing: "Tracing | None") -> None:
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

    def many(self, tenant_id: str, audit_ids: Sequence[str]) -> "dict[str, NodeAuditRecord]":
        """Forwarded."""
        return self._inner.many(tenant_id, audit_ids)

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

    def __init__(self, inner: "WebhookRepository", seen: Seen) -> None:
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

    def next_due(self) -> datetime | None:
        """Forwarded."""
        return self._inner.next_due()

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

    def deliveries(
        self,
        tenant_id: str,
        *,
        limit: int,
        before: str | None = None,
        status: DeliveryStatus | None = None,
    ) -> list[Delivery]:
        """Forwarded."""
        return self._inner.deliveries(tenant_id, limit=limit, before=before, status=status)

    def endpoint_health(self, tenant_id: str, since: datetime) -> "list[EndpointHealth]":
        """Forwarded."""
        return self._inner.endpoint_health(tenant_id, since)

    def delivery_counts(self, tenant_id: str, since: datetime) -> "DeliveryCounts":
        """Forwarded."""
        return self._inner.delivery_counts(tenant_id, since)


__all__ = ["ObservedAudit", "ObservedRuns", "ObservedWebhooks", "Seen"]
