"""ConnectorCostRepository.claim_abandoned on the adapter under test (ADR 0050).

Held reservations are made here as a test's reserve step makes them (:func:`hold`): the scope
locked, the worst case reserved, the test stored ``reserved``, in one unit of work.
"""

from datetime import datetime, timedelta
from decimal import Decimal

import attrs

from ecp_core.connectors.model import ConnectorTest, TrialState
from ecp_core.connectors.rules import reserve
from ecp_core.ports.connectors import ConnectorsUnit
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.testing.conformance._base import StoreSuite
from ecp_core.testing.samples import NOW


def held_test(
    operation: str,
    *,
    tenant: str = "acme",
    campaign: str = "c1",
    run_id: str | None = "r1",
    at: datetime = NOW,
    amount: str = "0.25",
) -> ConnectorTest:
    """A test holding a reservation of ``amount`` USD, made at ``at``."""
    return ConnectorTest(
        tenant_id=tenant,
        campaign_id=campaign,
        operation_id=operation,
        run_id=run_id,
        connector_ref="fast-model",
        request_digest="sha256:" + "0" * 64,
        state=TrialState.RESERVED,
        reserved_usd=Decimal(amount),
        created_at=at,
    )


def hold(tx: ConnectorsUnit, test: ConnectorTest) -> None:
    """Reserve ``test``'s amount in its scope (no cap) and store it, as a test's reserve step."""
    costs = tx.connector_costs
    scope = costs.lock_scope(test.tenant_id, test.campaign_id, test.run_id)
    held = reserve(scope, test.reserved_usd, None)
    assert held is not None  # no cap: it always fits
    costs.save_scope(held)
    costs.add_test(test)


def finished(test: ConnectorTest) -> ConnectorTest:
    """``test`` settled (its answer does not matter to the claim)."""
    return attrs.evolve(test, state=TrialState.FINISHED)


class AbandonedReservationConformance(StoreSuite):
    """Reserved tests older than the bound are claimed, of every tenant, oldest first."""

    def test_only_reservations_made_before_the_bound_are_claimed_oldest_first(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Finished tests and newer reservations stay; ties go by tenant, campaign, operation."""
        tests = [
            held_test("op-a"),
            held_test("op-b", tenant="other", at=NOW - timedelta(seconds=5)),
            held_test("op-c", run_id=None, at=NOW + timedelta(seconds=1)),
            held_test("op-d", tenant="other"),
            held_test("op-e", campaign="c0"),
            held_test("op-new", at=NOW + timedelta(seconds=100)),
            held_test("op-done", at=NOW - timedelta(seconds=50)),
        ]
        with uow() as tx:
            for test in tests:
                hold(tx, test)
            tx.connector_costs.save_test(finished(tests[-1]))
            tx.commit()
        bound = NOW + timedelta(seconds=10)
        with uow() as tx:
            claimed = tx.connector_costs.claim_abandoned(bound, 10)
        assert claimed == [tests[1], tests[4], tests[0], tests[3], tests[2]]
        with uow() as tx:
            assert tx.connector_costs.claim_abandoned(bound, 2) == [tests[1], tests[4]]
            assert tx.connector_costs.claim_abandoned(NOW - timedelta(seconds=5), 10) == []
            at_bound = tx.connector_costs.claim_abandoned(NOW + timedelta(seconds=100), 10)
            assert tests[5] not in at_bound  # strictly before the bound

    def test_a_settled_test_is_not_claimed_again(self, uow: UnitOfWorkFactory) -> None:
        """Once saved finished (and committed), a claim no longer finds it; a rollback keeps it."""
        test = held_test("op-1", amount="0.000000000000000001")
        with uow() as tx:
            hold(tx, test)
            tx.commit()
        later = NOW + timedelta(minutes=5)
        with uow() as tx:
            assert tx.connector_costs.claim_abandoned(later, 5) == [test]
            tx.connector_costs.save_test(finished(test))  # not committed
        with uow() as tx:
            assert tx.connector_costs.claim_abandoned(later, 5) == [test]
            tx.connector_costs.save_test(finished(test))
            tx.commit()
        with uow() as tx:
            assert tx.connector_costs.claim_abandoned(later, 5) == []
            assert tx.connector_costs.find_test("acme", "c1", "op-1") == finished(test)


__all__ = ["AbandonedReservationConformance", "finished", "held_test", "hold"]
