"""Ports: what the core needs from the outside world, as ``typing.Protocol``s.

Storage ports are grouped in a :class:`UnitOfWork`: everything done through one unit commits
together or not at all. ``ecp_core.memory`` implements every port in memory; ``ecp_postgres``
implements them on PostgreSQL. ``tests/contract`` holds the suites both must pass.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, Self

if TYPE_CHECKING:
    from datetime import datetime
    from types import TracebackType

    from ecp_core.api_keys.model import ApiKey
    from ecp_core.approvals.model import ApprovalActionRecord, ApprovalRecord
    from ecp_core.audit.record import ChainHead, NodeAuditRecord
    from ecp_core.audit.signing import PublicSigningKey
    from ecp_core.contracts.model import Contract
    from ecp_core.debugger.tally import Tally, TallyQuery
    from ecp_core.decisions.model import CompareRequest, DecisionArtifact, DecisionSchedule
    from ecp_core.decisions.selection import Selection, VersionWindow
    from ecp_core.deployments import Deployment
    from ecp_core.evidence.model import (
        ChargeRevision,
        Digested,
        ExecutionEvent,
        OutcomeDefinition,
        OutcomeEvent,
        SourceInventory,
    )
    from ecp_core.graphs.definition import GraphVersion
    from ecp_core.policies.model import DeploymentPolicy
    from ecp_core.reconciliation.matching import PricedEvent, ProviderWindow
    from ecp_core.reconciliation.model import StoredStatement
    from ecp_core.retention.model import LegalHold, RetentionAuditEntry, RetentionPolicy
    from ecp_core.runs.model import Run, RunClaim
    from ecp_core.types import ApprovalStatus
    from ecp_core.webhooks.model import Delivery, DeliveryAttempt, Subscription, WebhookEventType


class Clock(Protocol):
    """The current time, aware and in UTC."""

    def now(self) -> datetime:
        """Return the current instant."""
        ...


class IdFactory(Protocol):
    """Opaque, unique, time-ordered identifiers."""

    def new_id(self) -> str:
        """Return a fresh identifier."""
        ...


class Signer(Protocol):
    """Signs audit record digests."""

    key_id: str

    def sign_text(self, text: str) -> str:
        """Return the base64 signature over the ASCII ``text``."""
        ...

    def published(self) -> PublicSigningKey:
        """The public key that verifies this signer's signatures."""
        ...


class GraphRepository(Protocol):
    """Immutable graph versions per tenant."""

    def add(self, version: GraphVersion) -> None:
        """Store a new version (Conflict when that version number exists)."""
        ...

    def get(self, tenant_id: str, graph_id: str, version: int) -> GraphVersion | None:
        """One version, or None."""
        ...

    def latest(self, tenant_id: str, graph_id: str) -> GraphVersion | None:
        """The highest version, or None."""
        ...

    def find_digest(self, tenant_id: str, graph_id: str, digest: str) -> GraphVersion | None:
        """The version with this content digest, or None."""
        ...


class DeploymentRepository(Protocol):
    """Deployments per tenant."""

    def add(self, deployment: Deployment) -> None:
        """Store a new deployment (Conflict when the ref exists)."""
        ...

    def get(self, tenant_id: str, deployment_ref: str) -> Deployment | None:
        """One deployment, or None."""
        ...


class PolicyRepository(Protocol):
    """The policy in force per deployment."""

    def put(self, policy: DeploymentPolicy) -> None:
        """Store ``policy`` as the deployment's current policy."""
        ...

    def get(self, tenant_id: str, deployment_ref: str) -> DeploymentPolicy | None:
        """The current policy, or None."""
        ...


class RunRepository(Protocol):
    """Runs and their checkpoints."""

    def add(self, run: Run) -> None:
        """Store a new run (Conflict when the id exists)."""
        ...

    def get(self, tenant_id: str, run_id: str) -> Run | None:
        """One run of the tenant, or None."""
        ...

    def lock(self, tenant_id: str, run_id: str) -> Run | None:
        """Like :meth:`get`, holding the run against concurrent writers until commit."""
        ...

    def save(self, run: Run) -> None:
        """Replace a stored run (NotFound when absent)."""
        ...

    def by_idempotency_key(self, tenant_id: str, deployment_ref: str, key: str) -> Run | None:
        """The run started with this idempotency key, or None."""
        ...

    def page(self, tenant_id: str, *, limit: int, before: str | None = None) -> list[Run]:
        """Up to ``limit`` runs, newest first, older than run id ``before`` when given."""
        ...

    def count(self, tenant_id: str) -> int:
        """How many runs the tenant has."""
        ...

    def runnable(self, limit: int) -> list[Run]:
        """Runs in PENDING or RUNNING, oldest first, across tenants (for dispatch)."""
        ...

    def claim_runnable(self, now: datetime | None = None) -> RunClaim | None:
        """Claim the next run to dispatch, fairly across tenants; held until the unit of work ends.

        Eligible: PENDING or RUNNING and not backing off at ``now`` (None: no run is backing off).
        A run's *rank* is its place (from 1) among its tenant's eligible runs in id order; only
        the first ``candidates_per_tenant(number of such tenants)`` of each tenant are
        candidates (``ecp_core.runs.dispatch``). A tenant's *last
        service* is its latest claim. The claim takes the candidate no other transaction holds
        with the least (rank, last service with never first, run id) and stamps it as the newest
        claim, so one claim after another visits the tenants in turn, each oldest run first.
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

    def expired(self, tenant_id: str, updated_before: datetime, limit: int) -> list[Run]:
        """Terminal, not yet erased runs updated before the instant, oldest first.

        Runs an active legal hold covers are left out, so held runs cannot starve the purge.
        """
        ...

    def ids_of(self, tenant_id: str) -> list[str]:
        """Every run id of the tenant, oldest first."""
        ...

    def tenants(self) -> list[str]:
        """Every tenant that has runs."""
        ...


class ApprovalRepository(Protocol):
    """Approval records and their action trail."""

    def add(self, approval: ApprovalRecord) -> None:
        """Store a new approval."""
        ...

    def get(self, tenant_id: str, approval_id: str) -> ApprovalRecord | None:
        """One approval of the tenant, or None."""
        ...

    def save(self, approval: ApprovalRecord) -> None:
        """Replace a stored approval."""
        ...

    def for_run(
        self, tenant_id: str, run_id: str, status: ApprovalStatus | None = None
    ) -> list[ApprovalRecord]:
        """A run's approvals in creation order, optionally of one status."""
        ...

    def overdue(self, now: datetime, limit: int) -> list[ApprovalRecord]:
        """Pending approvals whose sla_deadline has passed, across tenants."""
        ...

    def add_action(self, action: ApprovalActionRecord) -> None:
        """Append to an approval's action trail."""
        ...

    def actions(self, tenant_id: str, approval_id: str) -> list[ApprovalActionRecord]:
        """An approval's action trail in order."""
        ...


class AuditRepository(Protocol):
    """Append-only audit chains, one per run."""

    def head(self, run_id: str) -> ChainHead | None:
        """The run's chain head, held against concurrent appends until commit."""
        ...

    def append(self, record: NodeAuditRecord) -> ChainHead:
        """Add ``record`` as the new head; ChainConflict unless it extends the current head."""
        ...

    def for_run(self, tenant_id: str, run_id: str) -> list[NodeAuditRecord]:
        """A run's records in chain order."""
        ...

    def for_deployment(
        self,
        tenant_id: str,
        deployment_ref: str,
        run_id: str | None = None,
        *,
        limit: int | None = None,
        after: tuple[str, int] | None = None,
    ) -> list[NodeAuditRecord]:
        """A deployment's records by run id, then chain order.

        At most ``limit`` of them, after the (run_id, attempt) position ``after`` when given.
        """
        ...

    def get(self, tenant_id: str, audit_id: str) -> NodeAuditRecord | None:
        """One record, or None."""
        ...

    def store_erasure(self, record: NodeAuditRecord) -> None:
        """Persist an erased record; only personal data and erasure fields may differ."""
        ...

    def aged(self, tenant_id: str, created_before: datetime, limit: int) -> list[NodeAuditRecord]:
        """Not yet erased digest_version 2 records created before the instant, oldest first.

        Records of runs an active legal hold covers are left out.
        """
        ...


class ContractRepository(Protocol):
    """Immutable contracts (named JSON Schemas) per tenant."""

    def add(self, contract: Contract) -> None:
        """Store a new contract (Conflict when the name exists)."""
        ...

    def get(self, tenant_id: str, name: str) -> Contract | None:
        """One contract, or None."""
        ...


class ApiKeyRepository(Protocol):
    """Project API keys (their hashes, never the keys) per tenant."""

    def add(self, key: ApiKey) -> None:
        """Store a new key (Conflict when its key_id or key_hash exists)."""
        ...

    def get(self, tenant_id: str, key_id: str) -> ApiKey | None:
        """One key of the tenant, revoked or not, or None."""
        ...

    def by_hash(self, key_hash: str) -> ApiKey | None:
        """The key with this hash in any tenant, revoked or not, or None (authentication)."""
        ...

    def page(
        self, tenant_id: str, *, limit: int, after: tuple[datetime, str] | None = None
    ) -> list[ApiKey]:
        """Up to ``limit`` keys by (created_at, key_id), after that pair when given."""
        ...

    def revoke(self, tenant_id: str, key_id: str, revoked_at: datetime) -> ApiKey | None:
        """Set revoked_at unless already set (the first revocation stays); the key, or None."""
        ...


class EvidenceRepository(Protocol):
    """Economic evidence of a tenant: events, revisions, inventories, outcome definitions.

    Each ``add_*`` stores the items whose id is new and returns how many were already stored
    with the same digest (exact replays). An id stored with another digest raises Conflict and,
    as the unit of work then rolls back, nothing of the batch is kept.
    """

    def add_executions(self, tenant_id: str, events: Sequence[Digested[ExecutionEvent]]) -> int:
        """Store execution events; also Conflict when a charge id belongs to another event."""
        ...

    def add_outcomes(self, tenant_id: str, events: Sequence[Digested[OutcomeEvent]]) -> int:
        """Store outcome assertions."""
        ...

    def add_revisions(self, tenant_id: str, events: Sequence[Digested[ChargeRevision]]) -> int:
        """Append charge-cost revisions."""
        ...

    def add_inventories(self, tenant_id: str, events: Sequence[Digested[SourceInventory]]) -> int:
        """Store source inventories."""
        ...

    def definition(
        self, tenant_id: str, workflow_id: str, workflow_version: str
    ) -> OutcomeDefinition | None:
        """The outcome definition of one workflow version, or None."""
        ...

    def add_definition(self, definition: OutcomeDefinition) -> None:
        """Store a new definition; Conflict when the version has one."""
        ...

    def count_executions(self, tenant_id: str, query: TallyQuery, *, limit: int) -> int:
        """Execution events in the query's window, counting no further than ``limit``."""
        ...

    def tally(self, tenant_id: str, query: TallyQuery) -> list[Tally]:
        """Aggregate the window as :func:`ecp_core.debugger.tally.tally` defines."""
        ...

    def erase_run(self, tenant_id: str, run_id: str, join_keys: Sequence[str]) -> int:
        """Delete execution and outcome events of this run id or these join keys; how many."""
        ...

    def provider_events(
        self, tenant_id: str, window: ProviderWindow, *, limit: int
    ) -> list[PricedEvent]:
        """At most ``limit`` of the provider's events, as ``reconciliation.matching`` selects."""
        ...

    def select(self, tenant_id: str, window: VersionWindow, *, limit: int) -> Selection:
        """One version's evidence as ``decisions.selection.select`` defines it (capped).

        At most ``limit`` execution events are returned.
        """
        ...

    def inventory(self, tenant_id: str, event_id: str) -> Digested[SourceInventory] | None:
        """One stored source inventory with its digest, or None."""
        ...


class DecisionRepository(Protocol):
    """Retained decision artifacts and decision schedules."""

    def lock_subject(self, tenant_id: str, request: CompareRequest) -> None:
        """Serialize comparisons of one subject (workflow, versions, window) until commit.

        Identical comparisons then find each other, and revisions are numbered without repeats.
        """
        ...

    def find(
        self, tenant_id: str, request_digest: str, fingerprint: str
    ) -> DecisionArtifact | None:
        """The artifact of this request over this evidence, or None."""
        ...

    def revisions(self, tenant_id: str, request: CompareRequest) -> int:
        """How many artifacts compare the same workflow, versions and window."""
        ...

    def add(self, artifact: DecisionArtifact, fingerprint: str) -> None:
        """Retain a new artifact."""
        ...

    def page(
        self,
        tenant_id: str,
        *,
        limit: int,
        before: tuple[datetime, str] | None = None,
        workflow_id: str | None = None,
    ) -> list[DecisionArtifact]:
        """Artifacts newest first by (created_at, decision_id), before that pair when given."""
        ...

    def add_schedule(self, schedule: DecisionSchedule) -> None:
        """Store a new schedule."""
        ...

    def schedules(self, tenant_id: str) -> list[DecisionSchedule]:
        """The tenant's schedules by (created_at, schedule_id)."""
        ...

    def due(self, now: datetime, *, limit: int) -> list[DecisionSchedule]:
        """Schedules of every tenant whose ``next_run_at`` is not after ``now``, oldest first."""
        ...

    def claim(self, schedule_id: str, expected: datetime, following: datetime) -> bool:
        """Move ``next_run_at`` from ``expected`` to ``following``; False if it had moved."""
        ...

    def record_run(
        self, schedule_id: str, at: datetime, decision_id: str | None, error: str | None
    ) -> None:
        """Note an occurrence's result on the schedule."""
        ...


class ReconciliationRepository(Protocol):
    """Imported provider statements, immutable per (tenant, provider, statement_id)."""

    def statement(self, tenant_id: str, provider: str, statement_id: str) -> StoredStatement | None:
        """One stored statement, or None."""
        ...

    def add_statement(self, stored: StoredStatement) -> None:
        """Store a new statement; Conflict when its identity is taken."""
        ...


class RetentionRepository(Protocol):
    """Retention policies, legal holds and the append-only retention audit log."""

    def policy(self, tenant_id: str) -> RetentionPolicy | None:
        """The stored policy row of a tenant (``default``: the system row), or None."""
        ...

    def put_policy(self, policy: RetentionPolicy) -> None:
        """Store a tenant's policy row, replacing any earlier one."""
        ...

    def policy_tenants(self) -> list[str]:
        """Tenants with a policy row of their own."""
        ...

    def add_hold(self, hold: LegalHold) -> None:
        """Store a new hold."""
        ...

    def hold(self, tenant_id: str, hold_id: str) -> LegalHold | None:
        """One hold of the tenant, or None."""
        ...

    def holds(self, tenant_id: str, *, active_only: bool = False) -> list[LegalHold]:
        """The tenant's holds, oldest first."""
        ...

    def save_hold(self, hold: LegalHold) -> None:
        """Replace a stored hold (its release)."""
        ...

    def append_log(self, entry: RetentionAuditEntry) -> None:
        """Append to the retention audit log."""
        ...

    def log(
        self, tenant_id: str, *, limit: int, before: str | None = None
    ) -> list[RetentionAuditEntry]:
        """The tenant's log, newest first, older than entry id ``before`` when given."""
        ...

    def lock_tenant(self, tenant_id: str, *, exclusive: bool) -> None:
        """Hold the tenant's retention lock until commit.

        Erasures take it shared and new holds exclusively, so a hold never lands while an erasure
        that cannot see it is in flight.
        """
        ...


class WebhookRepository(Protocol):
    """Subscriptions, the delivery outbox and its attempts."""

    def add_subscription(self, subscription: Subscription) -> None:
        """Store a new subscription."""
        ...

    def subscription(self, tenant_id: str, subscription_id: str) -> Subscription | None:
        """One live subscription of the tenant, or None."""
        ...

    def subscriptions(self, tenant_id: str) -> list[Subscription]:
        """The tenant's live subscriptions, oldest first."""
        ...

    def matching(
        self, tenant_id: str, deployment_ref: str, event_type: WebhookEventType
    ) -> list[Subscription]:
        """Live subscriptions of the deployment that asked for the event type."""
        ...

    def delete_subscription(self, tenant_id: str, subscription_id: str) -> bool:
        """Stop a subscription (its deliveries stay); False when there was none."""
        ...

    def add_delivery(self, delivery: Delivery) -> None:
        """Queue a delivery."""
        ...

    def delivery(self, tenant_id: str, delivery_id: str) -> Delivery | None:
        """One delivery of the tenant, or None."""
        ...

    def save_delivery(self, delivery: Delivery) -> None:
        """Replace a stored delivery."""
        ...

    def claim_due(self, now: datetime, limit: int) -> list[Delivery]:
        """Pending deliveries due by ``now``, oldest first, held against other workers until commit."""
        ...

    def add_attempt(self, attempt: DeliveryAttempt) -> None:
        """Record one POST of a delivery."""
        ...

    def attempts(self, tenant_id: str, delivery_id: str) -> list[DeliveryAttempt]:
        """A delivery's attempts in order."""
        ...

    def dead_letters(
        self, tenant_id: str, *, limit: int, before: str | None = None
    ) -> list[Delivery]:
        """The tenant's dead deliveries, newest first, older than delivery id ``before``."""
        ...


class UnitOfWork(Protocol):
    """One transaction over every storage port. Leaving without :meth:`commit` rolls back."""

    graphs: GraphRepository
    deployments: DeploymentRepository
    policies: PolicyRepository
    runs: RunRepository
    approvals: ApprovalRepository
    audit: AuditRepository
    contracts: ContractRepository
    retention: RetentionRepository
    webhooks: WebhookRepository
    evidence: EvidenceRepository
    reconciliation: ReconciliationRepository
    decisions: DecisionRepository
    api_keys: ApiKeyRepository

    def __enter__(self) -> Self:
        """Begin."""
        ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Roll back what was not committed and release."""
        ...

    def commit(self) -> None:
        """Make everything done so far durable."""
        ...


class ArtifactStore(Protocol):
    """Where runs keep artifacts (files, blobs), addressed by key."""

    def delete_prefix(self, prefix: str) -> int:
        """Delete every artifact whose key starts with ``prefix``; return how many."""
        ...

    def delete(self, keys: Sequence[str]) -> int:
        """Delete these artifacts where they exist; return how many were deleted."""
        ...


class EvidenceEraser(Protocol):
    """Deletes economic evidence events of a run by join key (the evidence area)."""

    def erase_join_keys(self, tenant_id: str, run_id: str, join_keys: Sequence[str]) -> int:
        """Delete the tenant's events with these join keys or this run id; return how many."""
        ...


UnitOfWorkFactory = Callable[[], "UnitOfWork"]
"""Makes a fresh unit of work per use case."""

__all__ = [
    "ApiKeyRepository",
    "ApprovalRepository",
    "ArtifactStore",
    "AuditRepository",
    "Clock",
    "ContractRepository",
    "DecisionRepository",
    "DeploymentRepository",
    "EvidenceEraser",
    "EvidenceRepository",
    "GraphRepository",
    "IdFactory",
    "PolicyRepository",
    "ReconciliationRepository",
    "RetentionRepository",
    "RunRepository",
    "Signer",
    "UnitOfWork",
    "UnitOfWorkFactory",
    "WebhookRepository",
]
