"""Entitlements enforced by the core's services over the in-memory store, with a fixed clock.

Ingestion counts new events (replays are free; a batch past the allowance is refused whole),
comparisons take a scan unless they return the retained decision, schedules are counted, a
scheduled scan shares the allowance and is recorded as refused when it is used up, and
reservations keep exactly what a reference model says (Hypothesis).
"""

from datetime import UTC, datetime, timedelta

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core import ActorIdentity, AuthMethod, Ecp
from ecp_core.billing.model import PlanName, SubscriptionStatus, trial_subscription
from ecp_core.decisions.model import CompareRequest, CreateScheduleRequest
from ecp_core.entitlements.model import PERIOD_METERS, SOLO, Meter
from ecp_core.errors import QuotaExhausted, SubscriptionInactive
from ecp_core.evidence.model import ExecutionEvent
from ecp_core.memory import MemoryStore
from ecp_core.system import FixedClock, SequentialIds
from ecp_core.types import CostMeasurement
from ecp_core.wire import structure

pytestmark = pytest.mark.unit

T0 = datetime(2026, 11, 1, tzinfo=UTC)
ACTOR = ActorIdentity(subject="analyst", auth_method=AuthMethod.BEARER, tenant_id="t")
DAY = 86_400


def world(subscription=None, *, enabled=True):
    clock = FixedClock(T0 + timedelta(hours=1))
    store = MemoryStore()
    if subscription is not None:
        with store.unit_of_work() as tx:
            tx.subscriptions.add(subscription)
            tx.commit()
    ecp = Ecp.build(
        store.unit_of_work,
        signer=None,
        clock=clock,
        ids=SequentialIds("d"),
        entitlements_enabled=enabled,
    )
    return ecp, clock, store


def trial():
    return trial_subscription("t", T0)


def solo(**changes):
    fields = {
        "plan": PlanName.SOLO,
        "status": SubscriptionStatus.ACTIVE,
        "period_end": T0 + timedelta(days=30),
        "price_id": "pri_solo",
    }
    return attrs.evolve(trial_subscription("t", T0), **(fields | changes))


def event(i):
    return ExecutionEvent(
        event_id=f"e{i:06d}",
        workflow_id="w",
        workflow_version="v1",
        run_id=f"r{i:06d}",
        occurred_at=T0,
        cost_usd=None,
        cost_measurement=CostMeasurement.UNMEASURED,
        charge_id=f"c{i:06d}",
    )


def used(store, period_start=T0):
    with store.unit_of_work() as tx:
        return tx.meters.usage("t", period_start)


def compare(ecp, days=10):
    body = {
        "workflow_id": "w",
        "baseline_version": "v1",
        "candidate_version": "v2",
        "start": "2026-10-01T00:00:00Z",
        "end": f"2026-10-{2 + days:02d}T00:00:00Z",
        "policy": {"min_success_rate": 0.5},
    }
    return ecp.decisions.compare(ACTOR, structure(body, CompareRequest))


def schedule(ecp, interval=DAY):
    request = CreateScheduleRequest(
        workflow_id="w",
        baseline_version="v1",
        candidate_version="v2",
        interval_seconds=interval,
        window_seconds=7 * DAY,
    )
    return ecp.decisions.create_schedule(ACTOR, request)


# --- off by default -----------------------------------------------------------------------------


@pytest.mark.spec("§5 entitlements-off-self-hosted")
def test_without_enforcement_nothing_is_metered_or_refused():
    """Self-hosting: no subscription is needed and no meter moves."""
    ecp, _, store = world(enabled=False)
    assert not ecp.entitlements_enabled
    assert ecp.evidence.ingest_executions("t", [event(i) for i in range(5)]).stored == 5
    for days in range(3):
        assert compare(ecp, days)[1]
    for _ in range(7):
        schedule(ecp)
    assert used(store) == {}
    assert ecp.account_usage("t") is None


# --- ingestion ----------------------------------------------------------------------------------


@pytest.mark.spec("§7 meter-exhausted", "C12 quota-answers")
def test_ingestion_counts_new_events_and_refuses_a_batch_past_the_allowance_whole():
    """Replays are free; a batch over the remaining allowance stores nothing and counts nothing."""
    ecp, _, store = world(trial())
    assert ecp.evidence.ingest_executions("t", [event(i) for i in range(9_990)]).stored == 9_990
    assert ecp.evidence.ingest_executions("t", [event(i) for i in range(10)]).replayed == 10
    assert used(store) == {Meter.INGESTED_EVENTS: 9_990}
    with pytest.raises(QuotaExhausted) as refused:
        ecp.evidence.ingest_executions("t", [event(i) for i in range(9_990, 10_001)])
    assert refused.value.retry_after_seconds == 14 * DAY - 3600
    assert used(store) == {Meter.INGESTED_EVENTS: 9_990}
    assert (
        ecp.evidence.ingest_executions("t", [event(i) for i in range(9_985, 10_000)]).stored == 10
    )
    assert used(store) == {Meter.INGESTED_EVENTS: 10_000}


@pytest.mark.spec("§7 meter-exhausted")
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(1, 12)), max_size=12))
def test_ingested_events_match_a_reference_count(batches):
    """For any batches (overlapping ids replay), the meter is the number of distinct events
    stored, never above the allowance, and a refused batch leaves everything as it was."""
    ecp, _, store = world(solo())
    allowance = 40  # what is left of Solo's after the units taken below
    base = SOLO.allowance(Meter.INGESTED_EVENTS) - allowance
    with store.unit_of_work() as tx:
        tx.meters.add("t", Meter.INGESTED_EVENTS, T0, base)
        tx.commit()
    stored: set[int] = set()
    for first, size in batches:
        ids = set(range(first, first + size))
        new = ids - stored
        if len(stored) + len(new) > allowance:
            with pytest.raises(QuotaExhausted):
                ecp.evidence.ingest_executions("t", [event(i) for i in sorted(ids)])
        else:
            ecp.evidence.ingest_executions("t", [event(i) for i in sorted(ids)])
            stored |= new
        assert used(store).get(Meter.INGESTED_EVENTS, 0) == base + len(stored)


# --- scans --------------------------------------------------------------------------------------


@pytest.mark.spec("§7 meter-exhausted", "§8 trial-quotas")
def test_a_comparison_takes_one_scan_and_its_exact_retry_none():
    """The trial's one scan: a retry returns the retained decision free; a new one is 429."""
    ecp, _, store = world(trial())
    artifact, created = compare(ecp)
    assert created
    assert compare(ecp) == (artifact, False)
    assert used(store) == {Meter.DECISION_SCANS: 1}
    with pytest.raises(QuotaExhausted) as refused:
        compare(ecp, days=11)
    assert refused.value.meter == Meter.DECISION_SCANS
    assert used(store) == {Meter.DECISION_SCANS: 1}
    assert [d.decision_id for d in ecp.decisions.history("t", limit=10)[0]] == [
        artifact.decision_id
    ]


@pytest.mark.spec("§7 backtest-after-cancel", "C12 quota-answers")
@pytest.mark.parametrize("status", ["canceled", "paused", "past_due"])
def test_an_inactive_subscription_compares_and_ingests_nothing(status):
    """Canceled, paused or past due: 402 and nothing stored; history stays readable."""
    ecp, _, store = world(solo(status=SubscriptionStatus(status)))
    with pytest.raises(SubscriptionInactive):
        compare(ecp)
    with pytest.raises(SubscriptionInactive):
        ecp.evidence.ingest_executions("t", [event(1)])
    assert used(store) == {}
    assert ecp.decisions.history("t", limit=10) == ([], None)


@pytest.mark.spec("§8 solo-quotas")
def test_manual_and_scheduled_scans_share_the_allowance_and_a_refused_run_is_recorded():
    """A scheduled scan takes from the same allowance; used up, its run is recorded as refused."""
    ecp, clock, store = world(solo())
    with store.unit_of_work() as tx:
        tx.meters.add("t", Meter.DECISION_SCANS, T0, 153)
        tx.commit()
    schedule(ecp)
    assert compare(ecp)[1]
    assert len(ecp.decisions.run_due()) == 1
    [ran] = ecp.decisions.schedules("t")
    assert ran.last_decision_id is not None
    assert ran.last_error is None
    assert used(store) == {Meter.DECISION_SCANS: 155}
    clock.advance(DAY)
    assert len(ecp.decisions.run_due()) == 1
    [refused] = ecp.decisions.schedules("t")
    assert refused.last_decision_id is None
    assert refused.last_error.startswith("refused (quota_exhausted)")
    assert used(store) == {Meter.DECISION_SCANS: 155}


@pytest.mark.spec("§8 trial-quotas", "§8 solo-quotas")
@pytest.mark.parametrize(("subscription", "count"), [(trial(), 1), (solo(), 5)])
def test_schedules_are_limited_to_the_plan_s_count(subscription, count):
    """The trial has one schedule, Solo five; the next one is refused and not stored."""
    ecp, _, _ = world(subscription)
    for _ in range(count):
        schedule(ecp)
    with pytest.raises(QuotaExhausted) as refused:
        schedule(ecp)
    assert refused.value.meter == Meter.SCHEDULES
    assert len(ecp.decisions.schedules("t")) == count


@pytest.mark.spec("§3.6 trialing-gets-trial-quotas")
def test_a_merchant_trial_with_the_solo_price_gets_trial_quotas():
    """Trialing at the merchant with the Solo plan and price: still one scan."""
    ecp, _, _ = world(solo(status=SubscriptionStatus.TRIALING, merchant_subscription_id="sub_1"))
    assert compare(ecp)[1]
    with pytest.raises(QuotaExhausted):
        compare(ecp, days=11)


@pytest.mark.spec("§8 solo-quotas")
def test_the_meters_reset_with_the_billing_period():
    """Exhausted in one period; a renewal to the next period starts every meter at zero."""
    ecp, _, store = world(trial())
    compare(ecp)
    with pytest.raises(QuotaExhausted):
        compare(ecp, days=11)
    renewed = solo(period_start=T0 - timedelta(days=1), period_end=T0 + timedelta(days=29))
    with store.unit_of_work() as tx:
        tx.subscriptions.save(renewed)
        tx.commit()
    assert compare(ecp, days=11)[1]
    assert used(store, T0 - timedelta(days=1)) == {Meter.DECISION_SCANS: 1}


# --- reservations and the account view ----------------------------------------------------------

operations = st.lists(
    st.one_of(
        st.tuples(st.just("reserve"), st.sampled_from(PERIOD_METERS), st.integers(0, 120)),
        st.tuples(st.just("commit"), st.integers(0, 10), st.integers(0, 200)),
        st.tuples(st.just("release"), st.integers(0, 10), st.just(0)),
    ),
    max_size=25,
)


@pytest.mark.spec("§8 backtest-metering", "§7 meter-exhausted")
@given(operations)
def test_reservations_keep_what_a_reference_model_keeps(steps):
    """Any sequence of reserve, commit and release: meters equal the reference, stay within the
    allowance and never go below zero; a refused reservation moves nothing."""
    ecp, _, store = world(solo())
    entitlements = ecp.entitlements
    reference = dict.fromkeys(PERIOD_METERS, 0)
    open_reservations = []
    for kind, first, amount in steps:
        with store.unit_of_work() as tx:
            if kind == "reserve":
                fits = reference[first] + amount <= SOLO.allowance(first)
                if fits:
                    open_reservations.append(entitlements.reserve(tx, "t", {first: amount}))
                    reference[first] += amount
                else:
                    with pytest.raises(QuotaExhausted):
                        entitlements.reserve(tx, "t", {first: amount})
            elif open_reservations:
                reservation = open_reservations.pop(first % len(open_reservations))
                if kind == "commit":
                    entitlements.commit(tx, reservation, dict.fromkeys(reservation.units, amount))
                else:
                    entitlements.release(tx, reservation)
                for meter, reserved in reservation.units.items():
                    kept = min(amount, reserved) if kind == "commit" else 0
                    reference[meter] -= reserved - kept
            tx.commit()
        assert used(store) == {m: n for m, n in reference.items() if n > 0}


@pytest.mark.spec("§2.9 entitlement-projection")
def test_the_account_view_reads_plan_period_and_meters():
    """The account page's read: plan, state, period and each meter's use of its allowance."""
    ecp, _, _ = world(trial())
    ecp.evidence.ingest_executions("t", [event(i) for i in range(3)])
    schedule(ecp)
    view = ecp.account_usage("t")
    assert (view.plan, view.status, view.entitled) == (PlanName.TRIAL, "trialing", True)
    assert (view.period_start, view.period_end) == (T0, T0 + timedelta(days=14))
    readings = {r.meter: (r.used, r.allowance) for r in view.meters}
    assert readings[Meter.INGESTED_EVENTS] == (3, 10_000)
    assert readings[Meter.SCHEDULES] == (1, 1)
    assert readings[Meter.DECISION_SCANS] == (0, 1)
    assert ecp.account_usage("nobody") is None
