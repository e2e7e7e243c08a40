"""Use cases for provider bills: immutable import and the reconciliation report."""

from collections.abc import Callable

from ecp_core.errors import Conflict, EvidenceWindowTooLarge, FieldError, NotFound, ValidationFailed
from ecp_core.identity import ActorIdentity
from ecp_core.ports.reconciliation import ReconciliationUnit
from ecp_core.ports.system import Clock
from ecp_core.reconciliation.matching import ProviderWindow
from ecp_core.reconciliation.model import (
    METHOD_VERSION,
    ProviderStatement,
    ReconciliationReport,
    StoredStatement,
)
from ecp_core.reconciliation.rules import (
    allocations,
    closure_state,
    normalized,
    statement_digest,
    statement_problems,
)

MAX_RECONCILIATION_EVENTS = 50_000
"""Execution events one report may reconcile against (more is refused, never truncated)."""


class ReconciliationService:
    """Imports provider statements and reconciles them with measured execution evidence."""

    def __init__(self, uow: Callable[[], ReconciliationUnit], clock: Clock) -> None:
        """Wire the service."""
        self._uow = uow
        self._clock = clock

    def import_statement(
        self, actor: ActorIdentity, statement: ProviderStatement
    ) -> tuple[StoredStatement, bool]:
        """Store a statement; ``(stored, created)``.

        An exact replay (same digest) returns the stored statement; other content under the
        same (tenant, provider, statement_id) raises Conflict.
        """
        problems = statement_problems(statement)
        if problems:
            raise ValidationFailed("the statement breaks reconciliation rules", errors=problems)
        digest = statement_digest(statement)
        with self._uow() as uow:
            stored = uow.reconciliation.statement(
                actor.tenant_id, statement.provider, statement.statement_id
            )
            if stored is not None:
                if stored.digest != digest:
                    raise Conflict(
                        f"statement {statement.statement_id} of {statement.provider} was imported "
                        "with other content; statements are immutable"
                    )
                return stored, False
            stored = StoredStatement(
                tenant_id=actor.tenant_id,
                statement=normalized(statement),
                digest=digest,
                imported_at=self._clock.now(),
                imported_by=actor.subject,
            )
            uow.reconciliation.add_statement(stored)
            uow.commit()
        return stored, True

    def report(self, tenant_id: str, provider: str, statement_id: str) -> ReconciliationReport:
        """Reconcile a stored statement with the tenant's evidence as it stands now."""
        as_of = self._clock.now()
        with self._uow() as uow:
            stored = uow.reconciliation.statement(tenant_id, provider, statement_id)
            if stored is None:
                raise NotFound(f"no statement {statement_id} of {provider}")
            statement = stored.statement
            window = ProviderWindow(
                provider=provider,
                start=statement.period_start,
                end=statement.period_end,
                as_of=as_of,
            )
            events = uow.evidence.provider_events(
                tenant_id, window, limit=MAX_RECONCILIATION_EVENTS + 1
            )
        if len(events) > MAX_RECONCILIATION_EVENTS:
            raise EvidenceWindowTooLarge(
                f"the statement period holds more than {MAX_RECONCILIATION_EVENTS:,} execution "
                f"events of {provider}; reconcile a shorter statement",
                errors=[FieldError(loc=("statement_id",), msg="period too large")],
            )
        found, totals = allocations(statement, events)
        return ReconciliationReport(
            method_version=METHOD_VERSION,
            provider=provider,
            statement_id=statement_id,
            statement_digest=stored.digest,
            period_start=statement.period_start,
            period_end=statement.period_end,
            as_of=as_of,
            closure_state=closure_state(found, totals),
            totals=totals,
            allocations=tuple(found),
        )
