"""The entitlement rules, pure: plan and billing period of a subscription, admission of usage.

- A trialing subscription always gets Trial quotas, whatever plan or price it names (spec
  "Subscription and account"); a trial past its end grants nothing (ADR 0033).
- An active subscription gets its paid plan (Solo; Team and Scale are internal shapes).
- Canceled, paused and past-due subscriptions, and tenants without one, get HTTP 402.
- Meters count in the subscription's billing period; a paid period the merchant has not renewed
  yet rolls forward by calendar months, so meters reset on time (ADR 0033).
- A use that would take a meter past its allowance is refused whole (HTTP 429, ``Retry-After``
  the whole seconds to the period's end).
"""

import calendar
import math
from collections.abc import Mapping
from datetime import datetime, timedelta

from ecp_core.billing.model import TRIAL_DAYS, PlanName, Subscription, SubscriptionStatus
from ecp_core.entitlements.model import (
    CALLS_PER_BACKTEST_CASE,
    PERIOD_METERS,
    PLANS,
    SOLO,
    TRIAL,
    AccountUsage,
    Entitlement,
    Meter,
    MeterReading,
    Period,
    Plan,
)
from ecp_core.errors import FieldError, QuotaExhausted, SubscriptionInactive, ValidationFailed


def add_months(moment: datetime, months: int) -> datetime:
    """``moment`` moved by whole calendar months, the day clamped to the month's last."""
    index = moment.year * 12 + moment.month - 1 + months
    year, month = divmod(index, 12)
    day = min(moment.day, calendar.monthrange(year, month + 1)[1])
    return moment.replace(year=year, month=month + 1, day=day)


def _monthly(anchor: datetime, now: datetime) -> Period:
    """The monthly period of the chain anchored at ``anchor`` that holds ``now`` (>= anchor)."""
    months = (now.year - anchor.year) * 12 + now.month - anchor.month
    months = max(months - 1, 0)
    while add_months(anchor, months + 1) <= now:
        months += 1
    return Period(start=add_months(anchor, months), end=add_months(anchor, months + 1))


def plan_of(subscription: Subscription) -> Plan:
    """The plan whose quotas the subscription grants (when it grants any)."""
    if subscription.status is SubscriptionStatus.TRIALING:
        return TRIAL  # even when it names the Solo price (spec "Subscription and account")
    if subscription.plan is PlanName.TRIAL:
        return SOLO  # a paid state naming no paid plan: Solo, the one plan sold
    return PLANS[subscription.plan]


def period_of(subscription: Subscription, now: datetime) -> Period:
    """The billing period the meters count in at ``now``.

    A trial's period is its own (14 days when the end is unknown) and never rolls; a paid one
    rolls forward by calendar months past its stored end, or from its start when it has none.
    """
    start, end = subscription.period_start, subscription.period_end
    if subscription.status is SubscriptionStatus.TRIALING:
        return Period(start=start, end=end or start + timedelta(days=TRIAL_DAYS))
    if end is not None and end > start and now < end:
        return Period(start=start, end=end)
    if now < start:
        return Period(start=start, end=add_months(start, 1))
    anchor = end if end is not None and end > start else start
    return _monthly(anchor, now)


def entitlement_of(subscription: Subscription | None, now: datetime) -> Entitlement:
    """What the tenant may use at ``now``; SubscriptionInactive (402) when nothing."""
    if subscription is None:
        raise SubscriptionInactive("the tenant has no subscription; log in to start a trial")
    status = subscription.status
    if status not in (SubscriptionStatus.TRIALING, SubscriptionStatus.ACTIVE):
        raise SubscriptionInactive(f"the subscription is {status}; entitlement is revoked")
    period = period_of(subscription, now)
    if status is SubscriptionStatus.TRIALING and now >= period.end:
        raise SubscriptionInactive(
            f"the trial ended at {period.end.isoformat()}; subscribe to Solo to continue"
        )
    return Entitlement(
        tenant_id=subscription.tenant_id,
        plan=plan_of(subscription),
        status=status,
        period=period,
    )


def retry_after_seconds(period: Period, now: datetime) -> int:
    """Whole seconds from ``now`` to the period's end, rounded up; at least 1."""
    return max(1, math.ceil((period.end - now).total_seconds()))


def admit(entitlement: Entitlement, meter: Meter, used: int, units: int, now: datetime) -> None:
    """Allow taking ``units`` more of ``meter`` after ``used``; QuotaExhausted (429) otherwise."""
    allowance = entitlement.plan.allowance(meter)
    if used + units > allowance:
        raise QuotaExhausted(
            f"{meter} allowance exhausted: {used} of {allowance} used in this billing period, "
            f"{units} more asked for the {entitlement.plan.name} plan",
            meter=meter,
            retry_after_seconds=retry_after_seconds(entitlement.period, now),
        )


def admit_schedule(
    entitlement: Entitlement, live: int, interval_seconds: int, now: datetime
) -> None:
    """Allow one more decision schedule; 422 below the plan's interval, 429 past its count."""
    shortest = entitlement.plan.min_schedule_interval_seconds
    if interval_seconds < shortest:
        raise ValidationFailed(
            "the schedule runs too often for the plan",
            errors=[FieldError(loc=("interval_seconds",), msg=f"must be at least {shortest}")],
        )
    admit(entitlement, Meter.SCHEDULES, live, 1, now)


def backtest_units(cases: int) -> dict[Meter, int]:
    """What one hosted backtest reserves: its count and 4 provider calls per case, together."""
    return {Meter.HOSTED_BACKTESTS: 1, Meter.PROVIDER_CALL_CREDITS: CALLS_PER_BACKTEST_CASE * cases}


def account_usage(
    subscription: Subscription, now: datetime, used: Mapping[Meter, int], live_schedules: int
) -> AccountUsage:
    """The entitlement projection of the account page: plan, state, period, each meter."""
    try:
        entitlement_of(subscription, now)
        entitled = True
    except SubscriptionInactive:
        entitled = False
    plan = plan_of(subscription)
    period = period_of(subscription, now)
    counts = {meter: used.get(meter, 0) for meter in PERIOD_METERS}
    counts[Meter.SCHEDULES] = live_schedules
    return AccountUsage(
        tenant_id=subscription.tenant_id,
        plan=plan.name,
        status=subscription.status,
        entitled=entitled,
        period_start=period.start,
        period_end=period.end,
        meters=tuple(
            MeterReading(meter=meter, used=counts[meter], allowance=plan.allowance(meter))
            for meter in Meter
        ),
    )


__all__ = [
    "account_usage",
    "add_months",
    "admit",
    "admit_schedule",
    "backtest_units",
    "entitlement_of",
    "period_of",
    "plan_of",
    "retry_after_seconds",
]
