"""Meters on the adapter under test: the port, and reservations through the entitlements.

The MeterRepository counts per tenant, meter and period, never below zero, and rolls back with its
unit of work; reserve, commit and release keep what the entitlement rules say.
"""

from datetime import timedelta

import attrs
import pytest

from ecp_core.billing.model import PlanName, Subscription, SubscriptionStatus, trial_subscription
from ecp_core.entitlements.model import Meter
from ecp_core.entitlements.rules import backtest_units
from ecp_core.entitlements.service import Entitlements
from ecp_core.errors import QuotaExhausted, SubscriptionInactive
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.system import FixedClock
from ecp_core.testing.conformance._base import StoreSuite
from ecp_core.testing.samples import NOW

EVENTS, SCANS = Meter.INGESTED_EVENTS, Meter.DECISION_SCANS
NEXT = NOW + timedelta(days=30)


class MeterRepositoryConformance(StoreSuite):
    """Meters: counted per (tenant, meter, period start), locked, added, subtracted, read."""

    @pytest.mark.spec("§7 meter-exhausted")
    def test_a_meter_never_used_holds_zero_and_adds_up(self, uow: UnitOfWorkFactory) -> None:
        """A new meter reads 0; additions sum; the new usage is answered."""
        with uow() as tx:
            assert tx.meters.lock("t1", EVENTS, NOW) == 0
            assert tx.meters.add("t1", EVENTS, NOW, 3) == 3
            assert tx.meters.add("t1", EVENTS, NOW, 4) == 7
            tx.commit()
        with uow() as tx:
            assert tx.meters.lock("t1", EVENTS, NOW) == 7
            assert tx.meters.usage("t1", NOW) == {EVENTS: 7}

    def test_meters_are_apart_by_tenant_meter_and_period(self, uow: UnitOfWorkFactory) -> None:
        """Each (tenant, meter, period start) counts alone: a new period starts at zero."""
        with uow() as tx:
            tx.meters.add("t1", EVENTS, NOW, 5)
            tx.meters.add("t1", SCANS, NOW, 1)
            tx.meters.add("t2", EVENTS, NOW, 2)
            tx.meters.add("t1", EVENTS, NEXT, 9)
            tx.commit()
        with uow() as tx:
            assert tx.meters.usage("t1", NOW) == {EVENTS: 5, SCANS: 1}
            assert tx.meters.usage("t2", NOW) == {EVENTS: 2}
            assert tx.meters.usage("t1", NEXT) == {EVENTS: 9}
            assert tx.meters.usage("t3", NOW) == {}
            assert tx.meters.lock("t2", SCANS, NOW) == 0

    @pytest.mark.spec("§8 backtest-metering")
    def test_subtracting_returns_units_and_stops_at_zero(self, uow: UnitOfWorkFactory) -> None:
        """Returned units come off the usage, which never goes below 0."""
        with uow() as tx:
            tx.meters.add("t1", Meter.PROVIDER_CALL_CREDITS, NOW, 20)
            assert tx.meters.subtract("t1", Meter.PROVIDER_CALL_CREDITS, NOW, 7) == 13
            assert tx.meters.subtract("t1", Meter.PROVIDER_CALL_CREDITS, NOW, 50) == 0
            assert tx.meters.subtract("t1", SCANS, NOW, 1) == 0
            tx.commit()
        with uow() as tx:
            assert tx.meters.usage("t1", NOW) == {}
            assert tx.meters.lock("t1", Meter.PROVIDER_CALL_CREDITS, NOW) == 0

    def test_usage_rolls_back_with_its_unit_of_work(self, uow: UnitOfWorkFactory) -> None:
        """Units taken in a unit of work that does not commit are not kept."""
        with uow() as tx:
            tx.meters.add("t1", SCANS, NOW, 1)
            tx.commit()
        with uow() as tx:
            tx.meters.lock("t1", SCANS, NOW)
            tx.meters.add("t1", SCANS, NOW, 1)
            tx.meters.add("t1", EVENTS, NOW, 10)
        with uow() as tx:
            assert tx.meters.usage("t1", NOW) == {SCANS: 1}


def _seeded(uow: UnitOfWorkFactory, subscription: Subscription) -> Entitlements:
    with uow() as tx:
        tx.subscriptions.add(subscription)
        tx.commit()
    return Entitlements(uow, FixedClock(NOW + timedelta(days=1)))


def _solo(tenant: str = "t1") -> Subscription:
    return attrs.evolve(
        trial_subscription(tenant, NOW),
        plan=PlanName.SOLO,
        status=SubscriptionStatus.ACTIVE,
        period_end=NEXT,
    )


class ReservationConformance(StoreSuite):
    """Reserve, commit and release through :class:`Entitlements` on the adapter under test."""

    @pytest.mark.spec("§7 meter-exhausted", "C12 quota-answers")
    def test_a_refused_reservation_moves_no_meter(self, uow: UnitOfWorkFactory) -> None:
        """The trial's one scan is taken once; the next is refused whole and counts nothing."""
        entitlements = _seeded(uow, trial_subscription("t1", NOW))
        with uow() as tx:
            entitlements.reserve(tx, "t1", {Meter.DECISION_SCANS: 1})
            tx.commit()
        with uow() as tx, pytest.raises(QuotaExhausted) as refused:
            entitlements.reserve(tx, "t1", {Meter.INGESTED_EVENTS: 5, Meter.DECISION_SCANS: 1})
        assert refused.value.meter == Meter.DECISION_SCANS
        assert refused.value.retry_after_seconds == 13 * 86_400
        with uow() as tx:
            assert tx.meters.usage("t1", NOW) == {Meter.DECISION_SCANS: 1}

    @pytest.mark.spec("§8 backtest-metering")
    def test_a_backtest_reserves_count_and_calls_and_returns_the_unused(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Count and 4 calls a case are reserved together; the calls not made come back."""
        entitlements = _seeded(uow, _solo())
        with uow() as tx:
            reservation = entitlements.reserve(tx, "t1", backtest_units(25))
            tx.commit()
        with uow() as tx:
            assert tx.meters.usage("t1", NOW) == {
                Meter.HOSTED_BACKTESTS: 1,
                Meter.PROVIDER_CALL_CREDITS: 100,
            }
            entitlements.commit(tx, reservation, {Meter.PROVIDER_CALL_CREDITS: 61})
            tx.commit()
        with uow() as tx:
            assert tx.meters.usage("t1", NOW) == {
                Meter.HOSTED_BACKTESTS: 1,
                Meter.PROVIDER_CALL_CREDITS: 61,
            }
            second = entitlements.reserve(tx, "t1", backtest_units(5))
            entitlements.release(tx, second)
            tx.commit()
        with uow() as tx:
            assert tx.meters.usage("t1", NOW)[Meter.PROVIDER_CALL_CREDITS] == 61

    @pytest.mark.spec("§7 backtest-after-cancel", "C12 quota-answers")
    def test_a_canceled_subscription_reserves_nothing(self, uow: UnitOfWorkFactory) -> None:
        """After a cancel, a backtest's reservation is refused with 402 and no meter moves."""
        entitlements = _seeded(uow, attrs.evolve(_solo(), status=SubscriptionStatus.CANCELED))
        with uow() as tx, pytest.raises(SubscriptionInactive):
            entitlements.reserve(tx, "t1", backtest_units(5))
        with uow() as tx:
            assert tx.meters.usage("t1", NOW) == {}
