"""Entitlement rules: plans exactly as the spec's table, the entitlement of a subscription, the
billing period meters count in, admission, and reservations as a reference model (Hypothesis)."""

import itertools
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core.billing.model import (
    TRIAL_DAYS,
    PlanName,
    Subscription,
    SubscriptionStatus,
    trial_subscription,
)
from ecp_core.entitlements.model import PLANS, SOLO, TRIAL, Meter, Period
from ecp_core.entitlements.rules import (
    account_usage,
    add_months,
    admit,
    admit_schedule,
    backtest_units,
    entitlement_of,
    period_of,
    retry_after_seconds,
)
from ecp_core.errors import QuotaExhausted, SubscriptionInactive, ValidationFailed

pytestmark = pytest.mark.unit

NOW = datetime(2026, 11, 22, 9, 30, tzinfo=UTC)
INACTIVE = (SubscriptionStatus.CANCELED, SubscriptionStatus.PAUSED, SubscriptionStatus.PAST_DUE)

moments = st.datetimes(  # Hypothesis bounds are naive; the drawn values are aware UTC
    min_value=datetime(2024, 1, 1),  # noqa: DTZ001
    max_value=datetime(2032, 12, 31),  # noqa: DTZ001
    timezones=st.just(UTC),
)
any_status = st.sampled_from(SubscriptionStatus)


@st.composite
def subscriptions(draw, statuses=any_status):
    start = draw(moments)
    end = draw(st.none() | st.integers(1, 40 * 86_400).map(lambda s: start + timedelta(seconds=s)))
    return Subscription(
        tenant_id="t1",
        plan=draw(st.sampled_from(PlanName)),
        status=draw(statuses),
        period_start=start,
        period_end=end,
        price_id=draw(st.none() | st.sampled_from(["pri_solo", "pri_other"])),
        merchant_subscription_id=draw(st.none() | st.just("sub_1")),
        created_at=start,
        updated_at=start,
    )


# --- the plans --------------------------------------------------------------------------------


@pytest.mark.spec("§8 trial-quotas")
def test_the_trial_is_the_spec_s_row():
    """14 days; 1 hosted backtest; 100 credits; 1 scan in total; 1 schedule of at least 24 h."""
    assert TRIAL_DAYS == 14
    assert TRIAL.allowance(Meter.HOSTED_BACKTESTS) == 1
    assert TRIAL.allowance(Meter.PROVIDER_CALL_CREDITS) == 100
    assert TRIAL.allowance(Meter.DECISION_SCANS) == 1
    assert TRIAL.allowance(Meter.SCHEDULES) == 1
    assert TRIAL.min_schedule_interval_seconds == 86_400
    assert not TRIAL.purchasable


@pytest.mark.spec("§8 solo-quotas")
def test_solo_is_the_spec_s_row():
    """39 USD a month; 100,000 events; 155 scans; 3 backtests; 300 credits; 5 schedules."""
    assert SOLO.monthly_price_usd == Decimal(39)
    assert SOLO.allowance(Meter.INGESTED_EVENTS) == 100_000
    assert SOLO.allowance(Meter.DECISION_SCANS) == 155
    assert SOLO.allowance(Meter.HOSTED_BACKTESTS) == 3
    assert SOLO.allowance(Meter.PROVIDER_CALL_CREDITS) == 300
    assert SOLO.allowance(Meter.SCHEDULES) == 5
    assert SOLO.min_schedule_interval_seconds == 86_400
    assert [plan.name for plan in PLANS.values() if plan.purchasable] == [PlanName.SOLO]


def test_team_and_scale_are_larger_internal_shapes():
    """Team and Scale cannot be bought and allow more of every meter than the plan below."""
    ladder = [PLANS[name] for name in (PlanName.SOLO, PlanName.TEAM, PlanName.SCALE)]
    for lower, higher in itertools.pairwise(ladder):
        assert not higher.purchasable
        assert all(higher.allowance(m) > lower.allowance(m) for m in Meter)


# --- the entitlement of a subscription ----------------------------------------------------------


@pytest.mark.spec("§3.6 trialing-gets-trial-quotas")
@given(subscriptions(st.just(SubscriptionStatus.TRIALING)), st.integers(0, 14 * 86_400 - 1))
def test_a_trialing_subscription_always_gets_trial_quotas(subscription, offset):
    """Whatever plan or price a trialing subscription names, inside its period it gets Trial."""
    now = subscription.period_start + timedelta(seconds=offset)
    if subscription.period_end is not None and now >= subscription.period_end:
        with pytest.raises(SubscriptionInactive):
            entitlement_of(subscription, now)
        return
    assert entitlement_of(subscription, now).plan == TRIAL


@pytest.mark.spec("§8 solo-quotas")
@given(subscriptions(st.just(SubscriptionStatus.ACTIVE)), moments)
def test_an_active_subscription_gets_its_paid_plan(subscription, now):
    """Active: Solo (or an internal shape it names), never the Trial."""
    entitlement = entitlement_of(subscription, now)
    expected = SOLO if subscription.plan is PlanName.TRIAL else PLANS[subscription.plan]
    assert entitlement.plan == expected
    assert entitlement.plan != TRIAL


@pytest.mark.spec("§7 backtest-after-cancel", "C12 quota-answers")
@given(subscriptions(st.sampled_from(INACTIVE)), moments)
def test_canceled_paused_or_past_due_is_refused(subscription, now):
    """Canceled, paused and past due grant nothing (402)."""
    with pytest.raises(SubscriptionInactive):
        entitlement_of(subscription, now)


@pytest.mark.spec("C12 quota-answers")
@given(st.sampled_from(INACTIVE), moments)
def test_every_inactive_state_is_refused(status, now):
    """Each of canceled, paused and past due is a 402."""
    subscription = Subscription(
        tenant_id="t1",
        plan=PlanName.SOLO,
        status=status,
        period_start=now - timedelta(days=1),
        period_end=now + timedelta(days=29),
        created_at=now,
        updated_at=now,
    )
    with pytest.raises(SubscriptionInactive, match=str(status)):
        entitlement_of(subscription, now)


@pytest.mark.spec("C12 quota-answers")
def test_no_subscription_is_refused():
    """A tenant without a subscription has no entitlement (402)."""
    with pytest.raises(SubscriptionInactive):
        entitlement_of(None, NOW)


@pytest.mark.spec("§8 trial-quotas")
@given(st.integers(0, 60 * 86_400))
def test_a_local_trial_lasts_14_days(seconds):
    """A local trial grants Trial until its 14th day ends, then nothing."""
    trial = trial_subscription("t1", NOW)
    now = NOW + timedelta(seconds=seconds)
    if seconds < TRIAL_DAYS * 86_400:
        assert entitlement_of(trial, now).period == Period(start=NOW, end=trial.period_end)
    else:
        with pytest.raises(SubscriptionInactive, match="trial ended"):
            entitlement_of(trial, now)


# --- the billing period -------------------------------------------------------------------------


@given(subscriptions(st.just(SubscriptionStatus.ACTIVE)), moments)
def test_a_paid_period_holds_now_once_it_started(subscription, now):
    """The period meters count in holds ``now`` (or is the first one, before it starts)."""
    period = period_of(subscription, now)
    assert period.start < period.end
    if now >= subscription.period_start:
        assert now in period
    else:
        assert period.start == subscription.period_start


@given(subscriptions(st.just(SubscriptionStatus.ACTIVE)), moments, st.integers(1, 400 * 86_400))
def test_paid_periods_only_move_forward_and_resets_line_up(subscription, now, later):
    """Later instants fall in the same period or a later one that starts where one ended."""
    first = period_of(subscription, now)
    second = period_of(subscription, now + timedelta(seconds=later))
    assert second.start >= first.start
    if second != first:
        assert second.start >= first.end
    if now + timedelta(seconds=later) < first.end:
        assert second == first


@pytest.mark.spec("§8 solo-quotas")
def test_a_period_the_merchant_has_not_renewed_rolls_by_a_month():
    """Past its stored end, a paid period rolls by calendar months (the meters reset)."""
    start = datetime(2027, 1, 31, tzinfo=UTC)
    subscription = Subscription(
        tenant_id="t1",
        plan=PlanName.SOLO,
        status=SubscriptionStatus.ACTIVE,
        period_start=start,
        period_end=datetime(2027, 2, 28, tzinfo=UTC),
        created_at=start,
        updated_at=start,
    )
    assert period_of(subscription, datetime(2027, 2, 27, tzinfo=UTC)).end == datetime(
        2027, 2, 28, tzinfo=UTC
    )
    assert period_of(subscription, datetime(2027, 3, 1, tzinfo=UTC)) == Period(
        start=datetime(2027, 2, 28, tzinfo=UTC), end=datetime(2027, 3, 28, tzinfo=UTC)
    )


@given(moments, st.integers(-400, 400))
def test_adding_months_keeps_the_time_and_clamps_the_day(moment, months):
    """The day is kept unless the month is shorter; the time of day never changes."""
    moved = add_months(moment, months)
    assert (moved.year * 12 + moved.month) - (moment.year * 12 + moment.month) == months
    assert moved.day == moment.day or moved.day < moment.day
    assert moved.timetz() == moment.timetz()


# --- admission ----------------------------------------------------------------------------------


@pytest.mark.spec("§7 meter-exhausted", "C12 quota-answers")
@given(
    st.sampled_from([m for m in Meter if m is not Meter.SCHEDULES]),
    st.integers(0, 400),
    st.integers(0, 400),
    st.integers(0, 30 * 86_400 - 1),
)
def test_admission_allows_exactly_up_to_the_allowance(meter, used, units, elapsed):
    """Allowed iff used + units fits; a refusal says when the period ends, in whole seconds."""
    period = Period(start=NOW, end=NOW + timedelta(days=30))
    now = NOW + timedelta(seconds=elapsed, microseconds=1)
    entitlement = entitlement_of(
        Subscription(
            tenant_id="t1",
            plan=PlanName.SOLO,
            status=SubscriptionStatus.ACTIVE,
            period_start=period.start,
            period_end=period.end,
            created_at=NOW,
            updated_at=NOW,
        ),
        now,
    )
    if used + units <= SOLO.allowance(meter):
        admit(entitlement, meter, used, units, now)
        return
    with pytest.raises(QuotaExhausted) as refused:
        admit(entitlement, meter, used, units, now)
    assert refused.value.meter == meter
    assert refused.value.retry_after_seconds == 30 * 86_400 - elapsed
    assert refused.value.retry_after_seconds == retry_after_seconds(period, now)


@given(st.integers(0, 10**7))
def test_retry_after_rounds_up_to_a_whole_second_and_is_never_zero(microseconds):
    """Whole seconds, rounded up, at least 1."""
    period = Period(start=NOW, end=NOW + timedelta(seconds=5))
    now = NOW + timedelta(microseconds=microseconds)
    wait = retry_after_seconds(period, now)
    assert wait >= 1
    assert now + timedelta(seconds=wait) >= period.end or wait == 1


@pytest.mark.spec("§8 trial-quotas", "§8 solo-quotas")
@given(st.sampled_from([TRIAL, SOLO]), st.integers(0, 8), st.integers(3600, 3 * 86_400))
def test_schedules_are_counted_and_run_at_most_daily(plan, live, interval):
    """One more schedule fits below the plan's count, and only at 24 hours or more."""
    subscription = trial_subscription("t1", NOW)
    if plan is SOLO:
        subscription = Subscription(
            tenant_id="t1",
            plan=PlanName.SOLO,
            status=SubscriptionStatus.ACTIVE,
            period_start=NOW,
            period_end=NOW + timedelta(days=30),
            created_at=NOW,
            updated_at=NOW,
        )
    entitlement = entitlement_of(subscription, NOW)
    if interval < 86_400:
        with pytest.raises(ValidationFailed):
            admit_schedule(entitlement, live, interval, NOW)
    elif live >= plan.allowance(Meter.SCHEDULES):
        with pytest.raises(QuotaExhausted):
            admit_schedule(entitlement, live, interval, NOW)
    else:
        admit_schedule(entitlement, live, interval, NOW)


@pytest.mark.spec("§8 backtest-metering")
@given(st.integers(5, 25))
def test_a_backtest_reserves_its_count_and_four_calls_a_case(cases):
    """Count and calls are reserved together: 1 backtest and 4 credits per case."""
    assert backtest_units(cases) == {
        Meter.HOSTED_BACKTESTS: 1,
        Meter.PROVIDER_CALL_CREDITS: 4 * cases,
    }


@pytest.mark.spec("§2.9 entitlement-projection")
@given(subscriptions(), moments, st.integers(0, 9))
def test_the_account_view_shows_plan_status_period_and_every_meter(subscription, now, live):
    """Plan, status, period and each meter's use and allowance, entitled or not."""
    view = account_usage(subscription, now, {Meter.DECISION_SCANS: 2}, live)
    assert view.status is subscription.status
    assert view.entitled == (
        subscription.status in (SubscriptionStatus.TRIALING, SubscriptionStatus.ACTIVE)
        and not (subscription.status is SubscriptionStatus.TRIALING and now >= view.period_end)
    )
    readings = {reading.meter: reading for reading in view.meters}
    assert set(readings) == set(Meter)
    assert readings[Meter.DECISION_SCANS].used == 2
    assert readings[Meter.SCHEDULES].used == live
    assert readings[Meter.INGESTED_EVENTS].used == 0
    if subscription.status is SubscriptionStatus.TRIALING:
        assert view.plan is PlanName.TRIAL
