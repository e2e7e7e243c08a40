"""Settling abandoned reservations: the arithmetic over any set of held reservations (ADR 0050)."""

from datetime import timedelta
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core.connectors.abandoned import AbandonedReservations, abandoned_after
from ecp_core.connectors.rules import settle
from ecp_core.memory import MemoryStore
from ecp_core.system import FixedClock, SequentialIds
from ecp_core.testing.conformance.connector_reservations import finished, held_test, hold
from ecp_core.testing.samples import NOW
from ecp_core.testing.strategies.evidence import exact_amounts
from ecp_core.types import CostMeasurement

pytestmark = pytest.mark.unit

RUNS = ("r0", "r1", None)

# One held reservation: its run, its amount, its age in whole seconds, and whether it had
# already finished normally (committing k percent of it) before the sweep.
reservations = st.lists(
    st.tuples(
        st.sampled_from(RUNS),
        exact_amounts((1, 10**6), (-18, 0)),
        st.integers(0, 400),
        st.none() | st.integers(0, 100),
    ),
    max_size=25,
)


def totals(store, run_id):
    with store.unit_of_work() as tx:
        scope = tx.connector_costs.scope("acme", "c1", run_id)
    return (Decimal(0), Decimal(0)) if scope is None else (scope.committed_usd, scope.reserved_usd)


def finish_normally(store, test, percent):
    """What a live test's second half does: commit part of the reservation, release it all."""
    with store.unit_of_work() as tx:
        costs = tx.connector_costs
        scope = costs.lock_scope(test.tenant_id, test.campaign_id, test.run_id)
        costs.save_scope(settle(scope, test.reserved_usd, (test.reserved_usd * percent) / 100))
        costs.save_test(finished(test))
        tx.commit()


def test_the_bound_is_twice_the_timeout_plus_a_minute():
    assert abandoned_after(10.0) == timedelta(seconds=80)
    assert abandoned_after(0.5) == timedelta(seconds=61)


@pytest.mark.spec("§2.6 connector-abandoned-reservations", "§2.6 connector-test-cost-caps")
@given(held=reservations, timeout=st.sampled_from([0.5, 5.0, 10.0, 60.0]), batch=st.integers(1, 7))
def test_each_old_reservation_moves_to_committed_once_and_totals_never_grow(held, timeout, batch):
    """Old ones (strictly past the bound) are committed in full as estimated, oldest first;
    younger and finished ones are untouched; committed + reserved of every scope is unchanged."""
    store, now = MemoryStore(), NOW + timedelta(hours=1)
    tests = []
    for n, (run_id, amount, age, percent) in enumerate(held):
        test = held_test(
            f"op-{n:02d}", run_id=run_id, amount=str(amount), at=now - timedelta(seconds=age)
        )
        with store.unit_of_work() as tx:
            hold(tx, test)
            tx.commit()
        if percent is not None:
            finish_normally(store, test, percent)
        tests.append((test, percent))
    before = {run_id: totals(store, run_id) for run_id in RUNS}
    sweeper = AbandonedReservations(
        store.unit_of_work, FixedClock(now), SequentialIds(), timeout_seconds=timeout
    )
    swept = []
    while batch_settled := sweeper.settle(limit=batch):
        assert len(batch_settled) <= batch
        swept.extend(batch_settled)
    assert sweeper.settle() == []

    bound = now - abandoned_after(timeout)
    old = [t for t, percent in tests if percent is None and t.created_at < bound]
    oldest_first = sorted(old, key=lambda t: (t.created_at, t.operation_id))
    assert [one.test.operation_id for one in swept] == [t.operation_id for t in oldest_first]
    for one in swept:
        assert one.entry.amount_usd == one.test.reserved_usd
        assert one.entry.cost_measurement is CostMeasurement.ESTIMATED
        assert one.test.response.estimated_cost_usd == one.test.reserved_usd
    for run_id in RUNS:
        moved = sum((t.reserved_usd for t in old if t.run_id == run_id), Decimal(0))
        young = sum(
            (
                t.reserved_usd
                for t, percent in tests
                if t.run_id == run_id and percent is None and t not in old
            ),
            Decimal(0),
        )
        committed, reserved = totals(store, run_id)
        assert committed == before[run_id][0] + moved
        assert reserved == before[run_id][1] - moved == young
        assert committed + reserved == sum(before[run_id])
