"""Concurrent takers of the last unit of an allowance, on a real PostgreSQL: exactly one wins.

Each thread opens its own unit of work (its own connection), waits at a barrier so that all of
them are inside a transaction together, then reserves. The meter row is locked FOR UPDATE, so
the reservations serialize: the first commits the last unit, every later one reads the committed
usage and is refused with 429, and the meter ends exactly at its allowance. Without the lock
(a plain ``SELECT``), several would read the same usage and all pass.
"""

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import attrs
import psycopg
import pytest

from ecp_core import Ecp
from ecp_core.billing.model import PlanName, SubscriptionStatus, trial_subscription
from ecp_core.entitlements.model import SOLO, Meter
from ecp_core.entitlements.service import Entitlements
from ecp_core.errors import QuotaExhausted
from ecp_core.evidence.model import ExecutionEvent
from ecp_core.system import FixedClock
from ecp_core.types import CostMeasurement
from ecp_postgres import PostgresStore

pytestmark = pytest.mark.integration

T0 = datetime(2026, 11, 1, tzinfo=UTC)
TAKERS = 8


@pytest.fixture
def store(fresh_database):
    with PostgresStore(fresh_database, min_size=TAKERS, max_size=TAKERS + 2) as opened:
        with opened.unit_of_work() as tx:
            tx.subscriptions.add(
                attrs.evolve(
                    trial_subscription("t", T0),
                    plan=PlanName.SOLO,
                    status=SubscriptionStatus.ACTIVE,
                    period_end=T0 + timedelta(days=30),
                )
            )
            tx.meters.add("t", Meter.DECISION_SCANS, T0, SOLO.allowance(Meter.DECISION_SCANS) - 1)
            tx.meters.add("t", Meter.INGESTED_EVENTS, T0, SOLO.allowance(Meter.INGESTED_EVENTS) - 1)
            tx.commit()
        yield opened


def used(store, meter):
    with store.unit_of_work() as tx:
        return tx.meters.usage("t", T0)[meter]


@pytest.mark.spec("§7 meter-exhausted")
def test_concurrent_reservations_of_the_last_unit_let_exactly_one_through(store):
    """Eight transactions at once ask for the last scan: one gets it, seven get 429."""
    entitlements = Entitlements(store.unit_of_work, FixedClock(T0 + timedelta(days=1)))
    barrier = threading.Barrier(TAKERS)

    def take() -> str:
        with store.unit_of_work() as tx:
            barrier.wait(timeout=30)
            try:
                entitlements.reserve(tx, "t", {Meter.DECISION_SCANS: 1})
            except QuotaExhausted:
                return "refused"
            tx.commit()
            return "taken"

    with ThreadPoolExecutor(TAKERS) as pool:
        outcomes = list(pool.map(lambda _: take(), range(TAKERS)))
    assert sorted(outcomes) == ["refused"] * (TAKERS - 1) + ["taken"]
    assert used(store, Meter.DECISION_SCANS) == SOLO.allowance(Meter.DECISION_SCANS)


@pytest.mark.spec("§7 meter-exhausted")
def test_concurrent_ingestion_requests_at_the_last_event_store_exactly_one(store):
    """Eight one-event batches race for the last ingested event: one is stored, seven refused."""
    ecp = Ecp.build(
        store.unit_of_work,
        signer=None,
        clock=FixedClock(T0 + timedelta(days=1)),
        entitlements_enabled=True,
    )

    def ingest(i: int) -> str:
        event = ExecutionEvent(
            event_id=f"e{i}",
            workflow_id="w",
            workflow_version="v1",
            run_id=f"r{i}",
            occurred_at=T0,
            cost_usd=None,
            cost_measurement=CostMeasurement.UNMEASURED,
            charge_id=f"c{i}",
        )
        try:
            ecp.evidence.ingest_executions("t", [event])
        except QuotaExhausted:
            return "refused"
        return "stored"

    with ThreadPoolExecutor(TAKERS) as pool:
        outcomes = list(pool.map(ingest, range(TAKERS)))
    assert sorted(outcomes) == ["refused"] * (TAKERS - 1) + ["stored"]
    assert used(store, Meter.INGESTED_EVENTS) == SOLO.allowance(Meter.INGESTED_EVENTS)
    with psycopg.connect(store.url) as conn:
        [stored] = conn.execute("SELECT count(*) FROM ecp_evidence_executions").fetchone()
    assert stored == 1
