"""Ports of the connectors area: stored connectors, the test cost ledger, and the HTTP probe."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import attrs

from ecp_core.ports.unit import Transaction

if TYPE_CHECKING:
    from collections.abc import Mapping
    from datetime import datetime

    from ecp_core.connectors.model import Connector, ConnectorCostEntry, ConnectorTest, CostScope


class ConnectorRepository(Protocol):
    """The connectors tenants stored through the API, by (tenant, ref)."""

    def add(self, connector: Connector) -> None:
        """Store a new connector; Conflict when the tenant has one with its ref."""
        ...

    def get(self, tenant_id: str, ref: str) -> Connector | None:
        """The tenant's connector called ``ref``, or None."""
        ...

    def page(self, tenant_id: str, *, limit: int, after: str | None = None) -> list[Connector]:
        """The tenant's connectors by ref (code point order), after ``after`` when given."""
        ...

    def replace(self, connector: Connector) -> None:
        """Replace a stored connector; NotFound when the tenant has none with its ref."""
        ...

    def remove(self, tenant_id: str, ref: str) -> bool:
        """Delete the tenant's connector called ``ref``; whether there was one."""
        ...


class ConnectorCostRepository(Protocol):
    """Cost scopes (committed and reserved totals), stored tests and the ledger of commits."""

    def lock_scope(self, tenant_id: str, campaign_id: str, run_id: str | None) -> CostScope:
        """The scope's totals, held until the unit of work ends (a new scope starts at zero).

        Concurrent tests of one scope take turns here, so a reservation is decided on totals
        no other transaction can change before it commits.
        """
        ...

    def scope(self, tenant_id: str, campaign_id: str, run_id: str | None) -> CostScope | None:
        """The scope's totals as committed, without a lock; None when it has none."""
        ...

    def save_scope(self, scope: CostScope) -> None:
        """Write the totals of a scope this unit of work locked."""
        ...

    def find_test(
        self, tenant_id: str, campaign_id: str, operation_id: str
    ) -> ConnectorTest | None:
        """The stored test of (tenant, campaign, operation), or None."""
        ...

    def add_test(self, test: ConnectorTest) -> None:
        """Store a new test; Conflict when its (tenant, campaign, operation) is taken."""
        ...

    def save_test(self, test: ConnectorTest) -> None:
        """Replace a stored test (its state and answer)."""
        ...

    def claim_abandoned(self, reserved_before: datetime, limit: int) -> list[ConnectorTest]:
        """Up to ``limit`` tests still reserved and created before ``reserved_before``.

        Oldest first (then tenant, campaign, operation), of every tenant. Each test and its
        scope are held until the unit of work ends; ones another unit of work holds are skipped
        (PostgreSQL: ``FOR UPDATE SKIP LOCKED``), so concurrent sweepers never claim one twice
        and a live test settling its scope is never waited for (ADR 0050).
        """
        ...

    def add_entry(self, tenant_id: str, entry: ConnectorCostEntry) -> None:
        """Append a committed cost to the ledger."""
        ...

    def entries(
        self,
        tenant_id: str,
        campaign_id: str,
        run_id: str | None,
        *,
        limit: int,
        after: str | None = None,
    ) -> list[ConnectorCostEntry]:
        """The scope's ledger by cost_event_id (code point order), after ``after`` when given."""
        ...


class ConnectorsUnit(Transaction, Protocol):
    """What the connectors area needs: the stored connectors and the cost ledger."""

    @property
    def connectors(self) -> ConnectorRepository:
        """The stored connectors."""
        ...

    @property
    def connector_costs(self) -> ConnectorCostRepository:
        """The tests' cost scopes, stored tests and ledger."""
        ...


@attrs.frozen(kw_only=True)
class ProbeTarget:
    """One HTTP probe: ``GET`` the URL, with a header whose value is a named secret."""

    url: str
    headers: Mapping[str, str] = attrs.field(factory=dict)
    secret_headers: Mapping[str, str] = attrs.field(factory=dict)
    """Header name to the *name* of the secret sent as its value."""
    timeout_seconds: float = 10.0


@attrs.frozen(kw_only=True)
class ProbeAnswer:
    """What a probe found: the status answered, or why there was none (never a secret)."""

    status: int | None
    failure: str | None = None
    request_id: str | None = None


class ConnectorProbe(Protocol):
    """Calls an HTTP connector's endpoint once (adapter: the server's guarded HTTP client)."""

    def probe(self, target: ProbeTarget) -> ProbeAnswer:
        """``GET`` the target through the outbound address guard; never raises for the call."""
        ...


__all__ = [
    "ConnectorCostRepository",
    "ConnectorProbe",
    "ConnectorRepository",
    "ConnectorsUnit",
    "ProbeAnswer",
    "ProbeTarget",
]
