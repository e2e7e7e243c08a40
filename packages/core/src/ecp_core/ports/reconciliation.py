"""The reconciliation port: imported statements, and its read of priced evidence."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ecp_core.ports.unit import Transaction

if TYPE_CHECKING:
    from ecp_core.reconciliation.matching import PricedEvent, ProviderWindow
    from ecp_core.reconciliation.model import StoredStatement


class ReconciliationRepository(Protocol):
    """Imported provider statements, immutable per (tenant, provider, statement_id)."""

    def statement(self, tenant_id: str, provider: str, statement_id: str) -> StoredStatement | None:
        """One stored statement, or None."""
        ...

    def add_statement(self, stored: StoredStatement) -> None:
        """Store a new statement; Conflict when its identity is taken."""
        ...


class ProviderEvents(Protocol):
    """Reconciliation's read of evidence: a provider's priced events."""

    def provider_events(
        self, tenant_id: str, window: ProviderWindow, *, limit: int
    ) -> list[PricedEvent]:
        """At most ``limit`` of the provider's events, as ``reconciliation.matching`` selects."""
        ...


class ReconciliationUnit(Transaction, Protocol):
    """What reconciliation needs: its statements and the provider's evidence."""

    @property
    def reconciliation(self) -> ReconciliationRepository:
        """The imported statements."""
        ...

    @property
    def evidence(self) -> ProviderEvents:
        """Evidence, as reconciliation reads it."""
        ...


__all__ = ["ProviderEvents", "ReconciliationRepository", "ReconciliationUnit"]
