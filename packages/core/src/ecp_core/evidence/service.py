"""Use cases for economic evidence: batched idempotent ingestion and outcome definitions."""

from collections.abc import Callable, Sequence
from typing import TypeVar

from ecp_core.entitlements.model import Meter
from ecp_core.entitlements.service import Entitlements
from ecp_core.errors import FieldError, OutcomeDefinitionImmutable, ValidationFailed
from ecp_core.evidence.model import (
    ChargeRevision,
    Digested,
    ExecutionEvent,
    IngestResult,
    OutcomeDefinition,
    OutcomeDefinitionRequest,
    OutcomeEvent,
    SourceInventory,
    digest_of,
)
from ecp_core.evidence.reading import ExecutionBody
from ecp_core.evidence.rules import (
    Problems,
    checked,
    execution_problems,
    inventory_problems,
    no_rules,
    predicate_problems,
    revision_problems,
)
from ecp_core.identity import ActorIdentity
from ecp_core.ports.evidence import EvidenceStore, EvidenceUnit
from ecp_core.ports.system import Clock

T = TypeVar("T")


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
        uow: EvidenceUnit | None = None,
    ) -> IngestResult:
        """Check and store a batch (see :meth:`_store`), in ``uow`` when given (it commits)."""
        digested = checked(events, rules)

        def stored(repo: EvidenceStore) -> tuple[int, int]:
            return len(digested), store(repo, digested)

        return (
            self._store(tenant_id, stored)
            if uow is None
            else self._store_in(uow, tenant_id, stored)
        )

    def _store(
        self, tenant_id: str, store: Callable[[EvidenceStore], tuple[int, int]]
    ) -> IngestResult:
        """Store a batch (``store``: received and replayed); new events take ingested-event units.

        The units are taken after storing, in the same transaction: exact replays are not
        counted again, and a batch past the allowance rolls back whole (ADR 0033).
        """
        with self._uow() as uow:
            result = self._store_in(uow, tenant_id, store)
            uow.commit()
        return result

    def _store_in(
        self,
        uow: EvidenceUnit,
        tenant_id: str,
        store: Callable[[EvidenceStore], tuple[int, int]],
    ) -> IngestResult:
        """:meth:`_store` in the caller's unit of work, which commits."""
        if self._entitlements is not None:
            self._entitlements.current(uow, tenant_id)  # 402 before any work
        received, replayed = store(uow.evidence)
        if self._entitlements is not None:
            new = {Meter.INGESTED_EVENTS: received - replayed}
            self._entitlements.reserve(uow, tenant_id, new)
        return IngestResult(received=received, stored=received - replayed, replayed=replayed)

    def ingest_executions(self, tenant_id: str, events: Sequence[ExecutionEvent]) -> IngestResult:
        """Store a batch of execution events; exact replays change nothing."""
        return self._ingest(
            tenant_id,
            events,
            execution_problems,
            lambda repo, items: repo.add_executions(tenant_id, items),
        )

    def admits(self, tenant_id: str, count: int) -> None:
        """Raise what storing ``count`` new events would now (402, 429); store and take nothing.

        ``model_call`` asks before it calls a model, so that a call is not paid for whose
        evidence the attempt could not then store (ADR 0098).
        """
        if self._entitlements is None:
            return
        with self._uow() as uow:  # left without a commit: the units go back
            self._entitlements.reserve(uow, tenant_id, {Meter.INGESTED_EVENTS: count})

    def ingest_executions_in(
        self, uow: EvidenceUnit, tenant_id: str, events: Sequence[ExecutionEvent]
    ) -> IngestResult:
        """:meth:`ingest_executions` in the caller's unit of work, which commits (ADR 0098).

        A run attempt's own evidence (``model_call``'s) so commits or rolls back with it.
        """
        return self._ingest(
            tenant_id,
            events,
            execution_problems,
            lambda repo, items: repo.add_executions(tenant_id, items),
            uow,
        )

    def ingest_execution_json(self, tenant_id: str, body: bytes) -> IngestResult:
        """Store the execution events of an ``ExecutionBatch`` JSON body (the HTTP route's way).

        The body is read, checked and digested in one pass, and the store writes each event
        while later ones are still being read (ADR 0060). A bad body raises the errors parsing
        and structuring it would (MalformedRequest, InvalidJsonValue, ValidationFailed), before
        any other: the body is read inside the unit of work, so an error raised there before
        the body was read whole (no allowance left, storage unavailable) gives way to the
        body's own.
        """
        batch = ExecutionBody(body)

        def store(repo: EvidenceStore) -> tuple[int, int]:
            replayed = repo.add_execution_body(tenant_id, batch)
            assert batch.received is not None  # noqa: S101 - the store read the whole body
            return batch.received, replayed

        try:
            return self._store(tenant_id, store)
        except Exception:
            batch.check()  # the body's own error first, if it has one
            raise

    def ingest_outcomes(self, tenant_id: str, events: Sequence[OutcomeEvent]) -> IngestResult:
        """Store a batch of outcome assertions."""
        return self._ingest(
            tenant_id, events, no_rules, lambda repo, items: repo.add_outcomes(tenant_id, items)
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
