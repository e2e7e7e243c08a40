"""Plans, their quotas and the meters that count usage (spec "Limits"; ADR 0033).

Trial and Solo are exactly the spec's rows; Team and Scale are internal shapes that cannot be
bought. Every meter but ``schedules`` counts per billing period and resets with it; ``schedules``
is the number of the tenant's live decision schedules.
"""

import enum
from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from types import MappingProxyType
from typing import Annotated

import attrs

from ecp_core.billing.model import PlanName, SubscriptionStatus
from ecp_core.constraints import AwareUtc, checked

MIN_SCHEDULE_INTERVAL_SECONDS = 86_400
"""The shortest interval of a decision schedule on every plan (24 hours)."""

CALLS_PER_BACKTEST_CASE = 4
"""Provider-call credits a hosted backtest reserves per case (spec "Backtest rules" 1)."""


class Meter(enum.StrEnum):
    """What a plan limits."""

    INGESTED_EVENTS = "ingested_events"
    DECISION_SCANS = "decision_scans"
    HOSTED_BACKTESTS = "hosted_backtests"
    PROVIDER_CALL_CREDITS = "provider_call_credits"
    SCHEDULES = "schedules"
    """Live decision schedules: a count, not a per-period meter."""


PERIOD_METERS = (
    Meter.INGESTED_EVENTS,
    Meter.DECISION_SCANS,
    Meter.HOSTED_BACKTESTS,
    Meter.PROVIDER_CALL_CREDITS,
)
"""The meters stored per billing period (reset with it)."""


def _frozen(allowances: Mapping[Meter, int]) -> Mapping[Meter, int]:
    missing = set(Meter) - set(allowances)
    if missing:
        msg = f"a plan needs an allowance for every meter; missing {sorted(missing)}"
        raise ValueError(msg)
    return MappingProxyType(dict(allowances))


@attrs.frozen(kw_only=True)
class Plan:
    """A plan's quotas: an allowance per meter, the shortest schedule interval, the price."""

    name: PlanName
    allowances: Mapping[Meter, int] = attrs.field(converter=_frozen)
    min_schedule_interval_seconds: int = MIN_SCHEDULE_INTERVAL_SECONDS
    monthly_price_usd: Decimal | None = None
    """What the plan costs a month; None for the trial and the internal shapes."""
    purchasable: bool = False

    def allowance(self, meter: Meter) -> int:
        """How many units of ``meter`` the plan allows (per period, or live schedules)."""
        return self.allowances[meter]


TRIAL = Plan(
    name=PlanName.TRIAL,
    allowances={
        Meter.INGESTED_EVENTS: 10_000,  # not in the spec: ADR 0033
        Meter.DECISION_SCANS: 1,
        Meter.HOSTED_BACKTESTS: 1,
        Meter.PROVIDER_CALL_CREDITS: 100,
        Meter.SCHEDULES: 1,
    },
)
"""The 14-day trial (spec "Limits": trial)."""

SOLO = Plan(
    name=PlanName.SOLO,
    allowances={
        Meter.INGESTED_EVENTS: 100_000,
        Meter.DECISION_SCANS: 155,
        Meter.HOSTED_BACKTESTS: 3,
        Meter.PROVIDER_CALL_CREDITS: 300,
        Meter.SCHEDULES: 5,
    },
    monthly_price_usd=Decimal(39),
    purchasable=True,
)
"""The one plan that can be bought (spec "Limits": Solo plan)."""

TEAM = Plan(
    name=PlanName.TEAM,
    allowances={
        Meter.INGESTED_EVENTS: 1_000_000,
        Meter.DECISION_SCANS: 1_000,
        Meter.HOSTED_BACKTESTS: 20,
        Meter.PROVIDER_CALL_CREDITS: 2_000,
        Meter.SCHEDULES: 25,
    },
)
"""An internal shape (cannot be bought): about ten Solo seats (ADR 0033)."""

SCALE = Plan(
    name=PlanName.SCALE,
    allowances={
        Meter.INGESTED_EVENTS: 10_000_000,
        Meter.DECISION_SCANS: 10_000,
        Meter.HOSTED_BACKTESTS: 200,
        Meter.PROVIDER_CALL_CREDITS: 20_000,
        Meter.SCHEDULES: 250,
    },
)
"""An internal shape (cannot be bought): ten times Team (ADR 0033)."""

PLANS: Mapping[PlanName, Plan] = MappingProxyType({p.name: p for p in (TRIAL, SOLO, TEAM, SCALE)})
"""Every plan by name."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class Period:
    """A billing period, half-open: ``start`` inclusive, ``end`` exclusive."""

    start: Annotated[datetime, AwareUtc()]
    end: Annotated[datetime, AwareUtc()]

    def __contains__(self, moment: datetime) -> bool:
        """Whether ``moment`` falls inside the period."""
        return self.start <= moment < self.end


@attrs.frozen(kw_only=True)
class Entitlement:
    """What a tenant may use now: its plan's quotas in the current billing period."""

    tenant_id: str
    plan: Plan
    status: SubscriptionStatus
    period: Period


@attrs.frozen(kw_only=True)
class Reservation:
    """Units taken from a tenant's meters in one billing period (returned there if unused)."""

    tenant_id: str
    period_start: datetime
    units: Mapping[Meter, int]


@attrs.frozen(kw_only=True)
class MeterReading:
    """One meter of the account view: units used and the plan's allowance."""

    meter: Meter
    used: int
    allowance: int


@attrs.frozen(kw_only=True)
class AccountUsage:
    """The tenant's entitlement projection (spec "Economic evidence resources"; the account page).

    ``entitled`` is False when the subscription no longer grants use (canceled, paused, past due,
    trial ended); the meters then show the last period's usage.
    """

    tenant_id: str
    plan: PlanName
    status: SubscriptionStatus
    entitled: bool
    period_start: datetime
    period_end: datetime
    meters: tuple[MeterReading, ...]


__all__ = [
    "CALLS_PER_BACKTEST_CASE",
    "MIN_SCHEDULE_INTERVAL_SECONDS",
    "PERIOD_METERS",
    "PLANS",
    "SCALE",
    "SOLO",
    "TEAM",
    "TRIAL",
    "AccountUsage",
    "Entitlement",
    "Meter",
    "MeterReading",
    "Period",
    "Plan",
    "Reservation",
]
