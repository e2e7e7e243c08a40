"""A tenant's subscription as the service knows it: plan, state and the current billing period.

A first login starts a local 14-day trial (state ``trialing``, no merchant ids). Only a signed
merchant event changes paid state afterwards; a checkout redirect never does (spec "Subscription
and account").
"""

import enum
from datetime import datetime, timedelta
from typing import Annotated

import attrs

from ecp_core.constraints import AwareUtc, Text, checked

TRIAL_DAYS = 14
"""The length of the local trial a first login starts."""


class PlanName(enum.StrEnum):
    """Plans with quotas. Only ``solo`` can be bought; ``team`` and ``scale`` are internal shapes."""

    TRIAL = "trial"
    SOLO = "solo"
    TEAM = "team"
    SCALE = "scale"


class SubscriptionStatus(enum.StrEnum):
    """A subscription's state, as the merchant's lifecycle events name it."""

    TRIALING = "trialing"
    ACTIVE = "active"
    PAST_DUE = "past_due"
    PAUSED = "paused"
    CANCELED = "canceled"


@attrs.frozen(kw_only=True, field_transformer=checked)
class Subscription:
    """One tenant's subscription.

    ``period_start``/``period_end`` bound the billing period the meters count in (the trial's
    14 days while trialing locally). ``last_event_at`` is the occurrence time of the newest
    merchant event applied (None for a local trial no event has touched yet).
    """

    tenant_id: Annotated[str, Text(1, 512)]
    plan: PlanName
    status: SubscriptionStatus
    period_start: Annotated[datetime, AwareUtc()]
    period_end: Annotated[datetime, AwareUtc()] | None
    merchant_subscription_id: str | None = None
    merchant_customer_id: str | None = None
    price_id: str | None = None
    last_event_id: str | None = None
    last_event_at: Annotated[datetime, AwareUtc()] | None = None
    created_at: Annotated[datetime, AwareUtc()]
    updated_at: Annotated[datetime, AwareUtc()]


def trial_subscription(tenant_id: str, now: datetime) -> Subscription:
    """The local 14-day trial a tenant's first login starts (no merchant ids, no event yet)."""
    return Subscription(
        tenant_id=tenant_id,
        plan=PlanName.TRIAL,
        status=SubscriptionStatus.TRIALING,
        period_start=now,
        period_end=now + timedelta(days=TRIAL_DAYS),
        created_at=now,
        updated_at=now,
    )


@attrs.frozen(kw_only=True, field_transformer=checked)
class CheckoutRequest:
    """``POST /v1/cloud/billing/checkout``: the plan to buy (only ``solo`` can be bought).

    The plan is free text here so that every other name gets the one clear refusal,
    ``plan_not_purchasable``; the server picks the price and the tenant metadata itself.
    """

    plan: Annotated[str, Text(1, 64)]
    """The plan to buy, by name."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class HandOff:
    """Where to send the browser next: the merchant's checkout or customer portal."""

    url: Annotated[str, Text(1, 2048)]
    """Where to send the browser: the merchant's checkout or customer portal."""


__all__ = [
    "TRIAL_DAYS",
    "CheckoutRequest",
    "HandOff",
    "PlanName",
    "Subscription",
    "SubscriptionStatus",
    "trial_subscription",
]
