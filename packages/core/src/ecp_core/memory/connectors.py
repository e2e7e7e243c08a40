"""Connectors in memory: stored connectors by (tenant, ref), test cost scopes, tests and ledger."""

from datetime import datetime

from ecp_core.connectors.model import (
    Connector,
    ConnectorCostEntry,
    ConnectorTest,
    CostScope,
    TrialState,
)
from ecp_core.errors import exists, missing
from ecp_core.memory.tables import Repository, detached

CONNECTORS = "connectors"
SCOPES = "connector_cost_scopes"
TESTS = "connector_tests"
LEDGER = "connector_costs"


def _age_order(test: ConnectorTest) -> tuple[datetime, str, str, str]:
    return (test.created_at, test.tenant_id, test.campaign_id, test.operation_id)


class MemoryConnectors(Repository):
    """ConnectorRepository in memory."""

    def add(self, connector: Connector) -> None:
        """Store a new connector; Conflict when the tenant has one with its ref."""
        key = (connector.tenant_id, connector.ref)
        if key in self._t.table(CONNECTORS):
            raise exists("connector", connector.ref)
        self._t.put(CONNECTORS, key, connector)

    @detached
    def get(self, tenant_id: str, ref: str) -> Connector | None:
        """The tenant's connector called ``ref``, or None."""
        found: Connector | None = self._t.table(CONNECTORS).get((tenant_id, ref))
        return found

    @detached
    def page(self, tenant_id: str, *, limit: int, after: str | None = None) -> list[Connector]:
        """The tenant's connectors by ref, after ``after`` when given."""
        mine = sorted(
            (c for (tenant, ref), c in self._t.table(CONNECTORS).items() if tenant == tenant_id),
            key=lambda c: c.ref,
        )
        return [c for c in mine if after is None or c.ref > after][:limit]

    def replace(self, connector: Connector) -> None:
        """Replace a stored connector; NotFound when there is none with its ref."""
        key = (connector.tenant_id, connector.ref)
        if key not in self._t.table(CONNECTORS):
            raise missing("connector", connector.ref)
        self._t.put(CONNECTORS, key, connector)

    def remove(self, tenant_id: str, ref: str) -> bool:
        """Delete the tenant's connector called ``ref``; whether there was one."""
        if (tenant_id, ref) not in self._t.table(CONNECTORS):
            return False
        self._t.remove(CONNECTORS, (tenant_id, ref))
        return True


class MemoryConnectorCosts(Repository):
    """ConnectorCostRepository in memory (a memory unit of work holds the whole store)."""

    @detached
    def lock_scope(self, tenant_id: str, campaign_id: str, run_id: str | None) -> CostScope:
        """The scope's totals (a new scope starts at zero); the store is held whole."""
        found = self._t.table(SCOPES).get((tenant_id, campaign_id, run_id))
        if found is None:
            found = CostScope(tenant_id=tenant_id, campaign_id=campaign_id, run_id=run_id)
            self._t.put(SCOPES, (tenant_id, campaign_id, run_id), found)
        scope: CostScope = found
        return scope

    @detached
    def scope(self, tenant_id: str, campaign_id: str, run_id: str | None) -> CostScope | None:
        """The scope's totals, or None."""
        found: CostScope | None = self._t.table(SCOPES).get((tenant_id, campaign_id, run_id))
        return found

    def save_scope(self, scope: CostScope) -> None:
        """Write a scope's totals."""
        self._t.put(SCOPES, (scope.tenant_id, scope.campaign_id, scope.run_id), scope)

    @detached
    def find_test(
        self, tenant_id: str, campaign_id: str, operation_id: str
    ) -> ConnectorTest | None:
        """The stored test of (tenant, campaign, operation), or None."""
        found: ConnectorTest | None = self._t.table(TESTS).get(
            (tenant_id, campaign_id, operation_id)
        )
        return found

    def add_test(self, test: ConnectorTest) -> None:
        """Store a new test; Conflict when its (tenant, campaign, operation) is taken."""
        key = (test.tenant_id, test.campaign_id, test.operation_id)
        if key in self._t.table(TESTS):
            raise exists("connector test", f"{test.campaign_id}/{test.operation_id}")
        self._t.put(TESTS, key, test)

    def save_test(self, test: ConnectorTest) -> None:
        """Replace a stored test."""
        self._t.put(TESTS, (test.tenant_id, test.campaign_id, test.operation_id), test)

    @detached
    def claim_abandoned(self, reserved_before: datetime, limit: int) -> list[ConnectorTest]:
        """Reserved tests created before ``reserved_before``, oldest first (the store is held)."""
        stale = (
            test
            for test in self._t.table(TESTS).values()
            if test.state is TrialState.RESERVED and test.created_at < reserved_before
        )
        return sorted(stale, key=_age_order)[:limit]

    def add_entry(self, tenant_id: str, entry: ConnectorCostEntry) -> None:
        """Append a committed cost to the ledger."""
        key = (tenant_id, entry.cost_event_id)
        if key in self._t.table(LEDGER):
            raise exists("connector cost", entry.cost_event_id)
        self._t.put(LEDGER, key, entry)

    @detached
    def entries(
        self,
        tenant_id: str,
        campaign_id: str,
        run_id: str | None,
        *,
        limit: int,
        after: str | None = None,
    ) -> list[ConnectorCostEntry]:
        """The scope's ledger by cost_event_id, after ``after`` when given."""
        found = sorted(
            (
                entry
                for (tenant, event_id), entry in self._t.table(LEDGER).items()
                if tenant == tenant_id
                and entry.campaign_id == campaign_id
                and entry.run_id == run_id
                and (after is None or event_id > after)
            ),
            key=lambda entry: entry.cost_event_id,
        )
        return found[:limit]


__all__ = ["MemoryConnectorCosts", "MemoryConnectors"]
