"""Use cases for economic evidence: batched idempotent ingestion and outcome definitions."""

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from ecp_core.entitlements.model import Meter
from ecp_core.entitlements.service import Entitlements
from ecp_core.errors import FieldError, OutcomeDefinitionImmutable, ValidationFailed
from ecp_core.evidence.model import (
    ChargeRevision,
    CostRole,
    Digested,
    ExecutionEvent,
    IngestResult,
    OutcomeDefinition,
    OutcomeDefinitionRequest,
    OutcomeEvent,
    PredicateKind,
    SourceInventory,
    digest_of,
)
from ecp_core.identity import ActorIdentity
from ecp_core.ports.evidence import EvidenceStore, EvidenceUnit
from ecp_core.ports.system import Clock
from ecp_core.types import CostMeasurement

T = TypeVar("T")
Problems = Iterable[tuple[str, str]]


def _cost_problems(cost: object, measurement: CostMeasurement) -> Problems:
    if cost is None and measurement is not CostMeasurement.UNMEASURED:
        yield (
            "cost_usd",
            f"is null (unknown), so cost_measurement must be unmeasured, not {measurement}",
        )
    if cost is not None and measurement is CostMeasurement.UNMEASURED:
        yield "cost_measurement", "is unmeasured, so cost_usd must be null"


def execution_problems(event: ExecutionEvent) -> Problems:
    """Rules across fields of an execution event."""
    if event.cost_role is CostRole.SUMMARY:
        if event.cost_usd is not None:
            yield "cost_usd", "must be null: a summary event carries no money"
        if event.charge_id is not None:
            yield "charge_id", "must be null: a summary event carries no money"
        return
    if event.charge_id is None:
        yield "charge_id", "is required for a charge"
    yield from _cost_problems(event.cost_usd, event.cost_measurement)


def revision_problems(revision: ChargeRevision) -> Problems:
    """Rules across fields of a charge revision."""
    yield from _cost_problems(revision.cost_usd, revision.cost_measurement)


def inventory_problems(inventory: SourceInventory) -> Problems:
    """Rules across fields of a source inventory."""
    if inventory.capture_end < inventory.capture_start:
        yield "capture_end", "must not be before capture_start"
    windows = [window.source_window_id for window in inventory.windows]
    if len(set(windows)) != len(windows):
        yield "windows", "must not repeat a source_window_id"


def predicate_problems(request: OutcomeDefinitionRequest) -> Problems:
    """An equality names a value; a threshold names a threshold; never both."""
    predicate = request.predicate
    if predicate.kind is PredicateKind.EQUALS:
        if predicate.value is None:
            yield "predicate.value", "is required for equals"
        if predicate.threshold is not None:
            yield "predicate.threshold", "must be absent for equals"
    else:
        if predicate.threshold is None:
            yield "predicate.threshold", f"is required for {predicate.kind}"
        if predicate.value is not None:
            yield "predicate.value", f"must be absent for {predicate.kind}"


def _checked(events: Sequence[T], rules: Callable[[T], Problems]) -> list[Digested[T]]:
    errors = [
        FieldError(loc=("events", index, *field.split(".")), msg=msg)
        for index, event in enumerate(events)
        for field, msg in rules(event)
    ]
    if errors:
        raise ValidationFailed("the batch breaks evidence rules; nothing was stored", errors=errors)
    return [Digested(event, digest_of(event)) for event in events]


def _no_rules(_: object) -> Problems:
    return ()


class EvidenceService:
    """Ingests evidence batches (all or nothing) and keeps outcome definitions immutable."""

    def __init__(
        self,
        uow: Callable[[], EvidenceUnit],
        clock: Clock,
        entitlements: Entitlements | None = None,
    ) -> None:
        """Wire the service; ``entitlements`` meters ingested events (None: no quotas)."""
        self._uow = uow
        self._clock = clock
        self._entitlements = entitlements

    def _ingest(
        self,
        tenant_id: str,
        events: Sequence[T],
        rules: Callable[[T], Problems],
        store: Callable[[EvidenceStore, Sequence[Digested[T]]], int],
    ) -> IngestResult:
        """Store a batch; with entitlements, its new events take ingested-event units.

        The units are taken after storing, in the same transaction: exact replays are not
        counted again, and a batch past the allowance rolls back whole (ADR 0033).
        """
        digested = _checked(events, rules)
        with self._uow() as uow:
            if self._entitlements is not None:
                self._entitlements.current(uow, tenant_id)  # 402 before any work
            replayed = store(uow.evidence, digested)
            if self._entitlements is not None:
                new = {Meter.INGESTED_EVENTS: len(events) - replayed}
                self._entitlements.reserve(uow, tenant_id, new)
            uow.commit()
        return IngestResult(received=len(events), stored=len(events) - replayed, replayed=replayed)

    def ingest_executions(self, tenant_id: str, events: Sequence[ExecutionEvent]) -> IngestResult:
        """Store a batch of execution events; exact replays change nothing."""
        return self._ingest(
            tenant_id,
            events,
            execution_problems,
            lambda repo, items: repo.add_executions(tenant_id, items),
        )

    def ingest_outcomes(self, tenant_id: str, events: Sequence[OutcomeEvent]) -> IngestResult:
        """Store a batch of outcome assertions."""
        return self._ingest(
            tenant_id, events, _no_rules, lambda repo, items: repo.add_outcomes(tenant_id, items)
        )

    def ingest_revisions(self, tenant_id: str, events: Sequence[ChargeRevision]) -> IngestResult:
        """Append a batch of charge-cost revisions."""
        return self._ingest(
            tenant_id,
            events,
            revision_problems,
            lambda repo, items: repo.add_revisions(tenant_id, items),
        )

    def ingest_inventories(self, tenant_id: str, events: Sequence[SourceInventory]) -> IngestResult:
        """Store a batch of source inventories."""
        return self._ingest(
            tenant_id,
            events,
            inventory_problems,
            lambda repo, items: repo.add_inventories(tenant_id, items),
        )

    def define_outcome(
        self, actor: ActorIdentity, request: OutcomeDefinitionRequest
    ) -> tuple[OutcomeDefinition, bool]:
        """Store the success contract of a workflow version; ``(definition, created)``.

        An exact replay returns the stored definition; a different rule for the same version
        raises OutcomeDefinitionImmutable.
        """
        errors = [
            FieldError(loc=tuple(field.split(".")), msg=msg)
            for field, msg in predicate_problems(request)
        ]
        if errors:
            raise ValidationFailed("the outcome definition is invalid", errors=errors)
        digest = digest_of(request)
        with self._uow() as uow:
            stored = uow.evidence.definition(
                actor.tenant_id, request.workflow_id, request.workflow_version
            )
            if stored is not None:
                if stored.digest != digest:
                    raise OutcomeDefinitionImmutable(
                        f"workflow version {request.workflow_version} already has a different "
                        "outcome definition; assign a new workflow version to change the rule"
                    )
                return stored, False
            definition = OutcomeDefinition(
                tenant_id=actor.tenant_id,
                workflow_id=request.workflow_id,
                workflow_version=request.workflow_version,
                outcome_type=request.outcome_type,
                predicate=request.predicate,
                digest=digest,
                created_at=self._clock.now(),
                created_by=actor.subject,
            )
            uow.evidence.add_definition(definition)
            uow.commit()
        return definition, True

    def erase_join_keys(self, tenant_id: str, run_id: str, join_keys: Sequence[str]) -> int:
        """Delete the run's execution and outcome events (the retention EvidenceEraser)."""
        with self._uow() as uow:
            erased = uow.evidence.erase_run(tenant_id, run_id, join_keys)
            uow.commit()
        return erased
