"""Reconciliation in memory: imported statements, and the provider's priced evidence."""

from ecp_core.errors import exists
from ecp_core.memory.evidence import EXECUTIONS, OUTCOMES, REVISIONS, EvidenceTables
from ecp_core.memory.tables import Repository, detached
from ecp_core.reconciliation.matching import PricedEvent, ProviderWindow, provider_events
from ecp_core.reconciliation.model import StoredStatement

STATEMENTS = "provider_statements"


class MemoryReconciliation(Repository):
    """ReconciliationRepository in memory: statements keyed by (tenant, provider, statement_id)."""

    @detached
    def statement(self, tenant_id: str, provider: str, statement_id: str) -> StoredStatement | None:
        """One stored statement, or None."""
        found: StoredStatement | None = self._t.table(STATEMENTS).get(
            (tenant_id, provider, statement_id)
        )
        return found

    def add_statement(self, stored: StoredStatement) -> None:
        """Store a new statement."""
        key = (stored.tenant_id, stored.statement.provider, stored.statement.statement_id)
        if key in self._t.table(STATEMENTS):
            raise exists("statement", f"{key[2]} of {key[1]}")
        self._t.put(STATEMENTS, key, stored)


class MemoryProviderEvents(EvidenceTables):
    """ProviderEvents in memory: :func:`ecp_core.reconciliation.matching.provider_events` itself."""

    def provider_events(
        self, tenant_id: str, window: ProviderWindow, *, limit: int
    ) -> list[PricedEvent]:
        """The reference selection for reconciliation, at most ``limit`` events."""
        return provider_events(
            window,
            self.items(EXECUTIONS, tenant_id),
            self.items(OUTCOMES, tenant_id),
            self.items(REVISIONS, tenant_id),
            self.definitions(tenant_id),
        )[:limit]
