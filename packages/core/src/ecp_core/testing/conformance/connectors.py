"""ConnectorRepository and ConnectorCostRepository on the adapter under test (ADR 0044)."""

from datetime import timedelta
from decimal import Decimal

import attrs
import pytest

from ecp_core.connectors.model import (
    BackendType,
    CleanupStatus,
    Connector,
    ConnectorCostEntry,
    ConnectorSource,
    ConnectorTest,
    ConnectorTestResponse,
    CostScope,
    TrialState,
)
from ecp_core.errors import Conflict, NotFound
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.testing.conformance._base import StoreSuite
from ecp_core.testing.samples import NOW
from ecp_core.types import CostMeasurement


def connector(ref: str, *, tenant: str = "acme", model_ref: str = "fast") -> Connector:
    """A stored model connector of ``tenant``."""
    return Connector(
        ref=ref,
        backend_type=BackendType.MODEL,
        params={"model_ref": model_ref},
        source=ConnectorSource.API,
        tenant_id=tenant,
        created_at=NOW,
        updated_at=NOW,
    )


def stored_test(
    operation: str, *, tenant: str = "acme", run_id: str | None = "r1"
) -> ConnectorTest:
    """A test of campaign ``c1`` holding a reservation of 0.25 USD."""
    return ConnectorTest(
        tenant_id=tenant,
        campaign_id="c1",
        operation_id=operation,
        run_id=run_id,
        connector_ref="fast-model",
        request_digest="sha256:" + "0" * 64,
        state=TrialState.RESERVED,
        reserved_usd=Decimal("0.25"),
        created_at=NOW,
    )


def entry(
    number: int, *, run_id: str | None = "r1", amount: str = "0.000123"
) -> ConnectorCostEntry:
    """A measured ledger entry of campaign ``c1``."""
    return ConnectorCostEntry(
        cost_event_id=f"cost-{number:04d}",
        campaign_id="c1",
        run_id=run_id,
        operation_id=f"op-{number}",
        connector_ref="fast-model",
        amount_usd=Decimal(amount),
        cost_measurement=CostMeasurement.MEASURED,
        created_at=NOW + timedelta(seconds=number),
    )


class ConnectorRepositoryConformance(StoreSuite):
    """Stored connectors: one per (tenant, ref), pages by ref in code point order."""

    def test_a_connector_is_stored_once_per_tenant_and_read_back(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Another tenant neither sees it nor collides with it; a second add is a conflict."""
        with uow() as tx:
            tx.connectors.add(connector("fast-model"))
            tx.connectors.add(connector("fast-model", tenant="other", model_ref="slow"))
            tx.commit()
        with uow() as tx:
            assert tx.connectors.get("acme", "fast-model") == connector("fast-model")
            assert tx.connectors.get("other", "fast-model") == connector(
                "fast-model", tenant="other", model_ref="slow"
            )
            assert tx.connectors.get("nobody", "fast-model") is None
            with pytest.raises(Conflict):
                tx.connectors.add(connector("fast-model"))

    def test_pages_go_by_ref_in_code_point_order(self, uow: UnitOfWorkFactory) -> None:
        """Upper case before lower case, digits first; ``after`` continues a page."""
        refs = ["b", "B", "a.1", "a", "9z"]
        with uow() as tx:
            for ref in refs:
                tx.connectors.add(connector(ref))
            tx.connectors.add(connector("A", tenant="other"))
            tx.commit()
        with uow() as tx:
            first = [c.ref for c in tx.connectors.page("acme", limit=3)]
            assert first == ["9z", "B", "a"]
            rest = [c.ref for c in tx.connectors.page("acme", limit=3, after="a")]
            assert rest == ["a.1", "b"]

    def test_replace_and_remove_touch_only_the_tenants_own(self, uow: UnitOfWorkFactory) -> None:
        """Replacing or removing what is not stored for the tenant changes nothing."""
        with uow() as tx:
            tx.connectors.add(connector("fast-model"))
            tx.commit()
        changed = attrs.evolve(
            connector("fast-model"),
            backend_type=BackendType.HTTP,
            params={"base_url": "https://api.example.com", "timeout_seconds": 2.5},
            updated_at=NOW + timedelta(minutes=1),
        )
        with uow() as tx:
            tx.connectors.replace(changed)
            with pytest.raises(NotFound):
                tx.connectors.replace(attrs.evolve(changed, tenant_id="other"))
            assert not tx.connectors.remove("other", "fast-model")
            tx.commit()
        with uow() as tx:
            assert tx.connectors.get("acme", "fast-model") == changed
            assert tx.connectors.remove("acme", "fast-model")
            tx.commit()
        with uow() as tx:
            assert tx.connectors.get("acme", "fast-model") is None


class ConnectorCostRepositoryConformance(StoreSuite):
    """Cost scopes start at zero, hold exact totals; tests are unique; the ledger pages."""

    def test_a_scope_starts_at_zero_and_keeps_exact_totals(self, uow: UnitOfWorkFactory) -> None:
        """Per (tenant, campaign, run); a run-less scope is its own; uncommitted totals vanish."""
        with uow() as tx:
            assert tx.connector_costs.scope("acme", "c1", "r1") is None
            scope = tx.connector_costs.lock_scope("acme", "c1", "r1")
            assert scope == CostScope(tenant_id="acme", campaign_id="c1", run_id="r1")
            exact = attrs.evolve(
                scope,
                committed_usd=Decimal("0.000000000000000001"),
                reserved_usd=Decimal("123456789012345.5"),
            )
            tx.connector_costs.save_scope(exact)
            tx.commit()
        with uow() as tx:
            assert tx.connector_costs.lock_scope("acme", "c1", "r1") == exact
            assert tx.connector_costs.lock_scope("acme", "c1", None).committed_usd == 0
            assert tx.connector_costs.scope("other", "c1", "r1") is None
            tx.connector_costs.save_scope(attrs.evolve(exact, reserved_usd=Decimal(0)))
        with uow() as tx:
            assert tx.connector_costs.scope("acme", "c1", "r1") == exact

    def test_a_test_is_stored_once_per_campaign_and_operation(self, uow: UnitOfWorkFactory) -> None:
        """Whatever its run; found by its tenant only; saved with its answer."""
        with uow() as tx:
            tx.connector_costs.add_test(stored_test("op-1"))
            tx.commit()
        with uow() as tx:
            assert tx.connector_costs.find_test("acme", "c1", "op-1") == stored_test("op-1")
            assert tx.connector_costs.find_test("other", "c1", "op-1") is None
            with pytest.raises(Conflict):
                tx.connector_costs.add_test(stored_test("op-1", run_id=None))
        answer = ConnectorTestResponse(
            ok=True,
            latency_ms=12.5,
            campaign_id="c1",
            operation_id="op-1",
            cleanup_status=CleanupStatus.RELEASED,
            cost_event_id="cost-0001",
            cost_measurement=CostMeasurement.MEASURED,
            estimated_cost_usd=Decimal("0.25"),
            provider_request_id="req-1",
        )
        finished = attrs.evolve(stored_test("op-1"), state=TrialState.FINISHED, response=answer)
        with uow() as tx:
            tx.connector_costs.save_test(finished)
            tx.commit()
        with uow() as tx:
            assert tx.connector_costs.find_test("acme", "c1", "op-1") == finished

    def test_the_ledger_pages_by_cost_event_id_per_scope(self, uow: UnitOfWorkFactory) -> None:
        """Entries of other runs, run-less scopes and tenants stay apart; ids are unique."""
        with uow() as tx:
            for number in (3, 1, 2):
                tx.connector_costs.add_entry("acme", entry(number))
            tx.connector_costs.add_entry("acme", entry(4, run_id=None))
            tx.connector_costs.add_entry("other", entry(5))
            tx.commit()
        with uow() as tx:
            costs = tx.connector_costs
            first = costs.entries("acme", "c1", "r1", limit=2)
            assert first == [entry(1), entry(2)]
            assert costs.entries("acme", "c1", "r1", limit=2, after="cost-0002") == [entry(3)]
            assert costs.entries("acme", "c1", None, limit=5) == [entry(4, run_id=None)]
            assert costs.entries("other", "c1", "r1", limit=5) == [entry(5)]
            with pytest.raises(Conflict):
                costs.add_entry("acme", entry(1))


__all__ = [
    "ConnectorCostRepositoryConformance",
    "ConnectorRepositoryConformance",
    "connector",
    "entry",
    "stored_test",
]
